import ArgumentParser
import Foundation
import IDTokenAudit
import IDTokenKit
import IDTokenKitRedis

/// `idtoken audit`'s options for an audit spread over several processes or machines (DESIGN §12): a shard of a
/// shared input, a pipe for `RDD.pipe` and `parallel --pipe`, and the run the shards belong to.
struct AuditDistributionOptions: ParsableArguments {
    @Option(help: "Audit only the lines whose number ≡ I (mod N), keeping their global numbers: I/N with 0 ≤ I < N. Default: from JOB_COMPLETION_INDEX and JOB_COMPLETIONS, or AWS_BATCH_JOB_ARRAY_INDEX and AWS_BATCH_JOB_ARRAY_SIZE, when set.")
    var shard: String?
    @Flag(help: "Pipe mode: records on standard input, exactly one verdict line per input line (blank ones too), in order, flushed as it goes; nothing else on standard output.")
    var pipe = false
    @Option(help: "The number of the input's first line (for a piece of a larger log, e.g. in parallel --pipe).")
    var firstLine: Int = 1
    @Option(help: "The run the shards belong to (default: derived from the input and the options, so that a shard run again gets the same id).")
    var runId: String?
    @Option(help: "With --replay-store and a run (--shard or --run-id): when Redis cannot answer, reject (stop the audit, exit 1) or allow (go on without the shared check; the summary's replayUnchecked counts those records).")
    var replayStoreFailure: String = "reject"
    /// `--replay-store-failure` as the replay store's failure mode (the one `idtoken serve`'s `replayFailureMode`
    /// reads too); nil when it names neither.
    var replayFailureMode: RedisReplayCacheConfiguration.FailureMode? { .init(rawValue: replayStoreFailure) }
    @Option(help: "How long a run's shared replay record lives in Redis, in seconds from each write (default: 7 days).")
    var runTtl: Int64 = 7 * 86_400

    /// Sets the shard, the pipe mode and the first line number on `options`; says on standard error where a shard
    /// taken from the environment came from.
    /// - Returns: the run id, when the audit is a shard (or names a run).
    func apply(to options: inout AuditOptions, command: AuditCommand,
               environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        guard firstLine >= 1 else { throw AuditCommand.fail("--first-line must be at least 1", AuditCommand.usageFailure) }
        if pipe {
            guard command.input == "-" else {
                throw AuditCommand.fail("--pipe reads standard input; give - or no FILE", AuditCommand.usageFailure)
            }
            guard command.summary != "-" else {
                throw AuditCommand.fail("--pipe keeps standard output for verdict lines: write the summary to a file", AuditCommand.usageFailure)
            }
            guard command.output == nil else {
                throw AuditCommand.fail("--pipe writes its verdict lines to standard output; do not give --output", AuditCommand.usageFailure)
            }
        }
        guard replayFailureMode != nil else {
            throw AuditCommand.fail("--replay-store-failure must be reject or allow, not \(replayStoreFailure)", AuditCommand.usageFailure)
        }
        guard runTtl >= 1 else { throw AuditCommand.fail("--run-ttl must be at least 1 second", AuditCommand.usageFailure) }
        options.pipe = pipe
        options.firstLine = firstLine
        do throws(AuditError) {
            if let shard {
                options.shard = try Shard(parsing: shard)
            } else if let (found, source) = try Shard.fromEnvironment(environment) {
                options.shard = found
                FileHandle.standardError.write(Data("idtoken audit: \(source)\n".utf8))
            }
        } catch {
            throw AuditCommand.fail(shard != nil ? "--shard: \(error.message)" : error.message, AuditCommand.usageFailure)
        }
        if options.shard != nil && pipe {
            throw AuditCommand.fail("--pipe audits what it is given; split the input with the engine, not with --shard", AuditCommand.usageFailure)
        }
        if let runId {
            guard !runId.isEmpty, runId.utf8.count <= 200, !runId.contains(where: { $0.isWhitespace }) else {
                throw AuditCommand.fail("--run-id must be 1 to 200 characters without spaces", AuditCommand.usageFailure)
            }
            return runId
        }
        guard let shard = options.shard else { return nil }
        return Self.derivedRunID(command: command, shardCount: shard.count)
    }

    /// A run id every shard of one run computes alike, and a shard run again computes again: the digest of what
    /// decides the verdicts (the input's name and size, the profiles, the time, the replay setting, the number of
    /// shards), not of the shard's index or where its output goes.
    static func derivedRunID(command: AuditCommand, shardCount: Int) -> String {
        var size = ""
        if command.input != "-", let attributes = try? FileManager.default.attributesOfItem(atPath: command.input),
           let bytes = attributes[.size] as? NSNumber {
            size = bytes.stringValue
        }
        let policy = command.policy
        let parts: [String] = [
            "input=" + command.input, "size=" + size, "config=" + (command.config ?? ""),
            "provider=" + (policy.provider ?? ""), "projectID=" + (policy.projectID ?? ""),
            "audience=" + policy.audience.joined(separator: ","), "issuer=" + policy.issuer.joined(separator: ","),
            "jwksURL=" + (policy.jwksURL ?? ""), "algorithm=" + policy.algorithm.joined(separator: ","),
            "nonce=" + (policy.nonce ?? "") + "|" + (policy.nonceExact ?? ""), "leeway=\(policy.leeway.map(String.init) ?? "")",
            "tenant=" + policy.tenant.joined(separator: ","), "signInProviders=" + policy.allowSignInProvider.joined(separator: ","),
            "keys=" + command.keys.joined(separator: ","), "at=" + (command.at ?? ""), "replay=\(command.replay)",
            "store=" + (command.replayStore ?? ""), "shards=\(shardCount)", "maxLineBytes=\(command.maxLineBytes)",
        ]
        // The options added since, each only when given, so that the runs that give none keep their ids.
        let later: [(String, [String])] = [
            ("projectNumber", policy.projectNumber.map { [$0] } ?? []), ("appID", policy.appID), ("hostedDomain", policy.hostedDomain),
            ("requireClaim", policy.requireClaim), ("anyTenant", policy.anyTenant ? ["true"] : []), ("entraV1", policy.entraV1 ? ["true"] : []),
        ]
        let given: [String] = later.filter { !$0.1.isEmpty }.map { $0.0 + "=" + $0.1.joined(separator: ",") }
        return "run-" + SHA256.hexDigest(utf8: (parts + given).joined(separator: "\n")).prefix(16)
    }
}
