import ArgumentParser
import Foundation
import IDTokenAudit
import IDTokenConfiguration
import IDTokenKit
import IDTokenKitRedis
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `idtoken audit`: judges every token of a log at the time it was presented (DESIGN §7).
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Verify every token in a log, in parallel, and report the verdicts and a summary.",
        discussion: """
        Each line is a record: a bare token; a JSON object with "token" and optional "at" (Unix seconds or an \
        RFC 3339 time, read as --at is), "nonce" and "id"; or any text holding a token (the first eyJ… compact JWS, e.g. an access-log \
        line with "Authorization: Bearer …"; a leading ISO 8601 time or a [dd/Mon/yyyy:HH:MM:SS +zzzz] time \
        before the token is its "at"). Records without a time are judged at --at. Blank lines are skipped; \
        unreadable ones are reported as malformed. FILE may be gzip-compressed (named .gz, or recognised by its \
        first bytes) or - for standard input.

        Output (standard output or --output): one record a line, in input order, with the fields \
        line,id,valid,error,iss,sub,aud,kid,exp,iat,at,message. The summary (JSON) goes to --summary; without it, \
        to standard output when --output is given, else to standard error.

        Exit status: 0 when the audit ran, whatever the verdicts; 1 when the input could not be read to its end \
        or the replay store stopped answering (the records before that point are still reported); 2 bad usage or \
        configuration; 3 keys unavailable.
        `idtoken audit merge SUMMARY...` combines the summaries of the shards of one audit (--shard I/N); see \
        `idtoken audit merge --help`.
        """
    )

    @Argument(help: ArgumentHelp("The log: a file, a .gz file, or - for standard input (with --pipe: standard input, the default).",
                                 valueName: "input"))
    var inputArgument: String?
    /// The log's name as given; with --pipe and no FILE, standard input.
    var input: String { inputArgument ?? "-" }

    @OptionGroup var policy: ProfileOptions
    @Option(name: .customLong("keys"), help: "A JWKS or kid → certificate map file, a key archive directory, or a URL. Repeatable; default: the provider's key URL.")
    var keys: [String] = []
    @Option(help: "The time for records that carry none: Unix seconds or an RFC 3339 time (a space may replace the T; without an offset, UTC) (default: now).") var at: String?
    @Option(help: "Verification threads (default: all cores).") var threads: Int?
    @Option(help: "Write the per-record output to this file instead of standard output.") var output: String?
    @Option(help: "ndjson (default) or csv.") var format: String = "ndjson"
    @Option(help: "Write the summary (JSON) to this file (- for standard output).") var summary: String?
    @Option(help: "Write a self-contained HTML report with plots to this file.") var html: String?
    @Flag(help: "Show progress on standard error even when it is not a terminal.") var progress = false
    @Option(help: "A JSON file of several profiles; tokens are routed by their issuer (see the README).") var config: String?
    @Flag(help: "Find replays: second and later appearances of an accepted token are `replayed`.") var replay = false
    @Option(help: "Find replays in a shared Redis replay store: redis://[[user]:password@]HOST:PORT[/DB].") var replayStore: String?
    @Option(help: "The longest line read, in bytes; longer lines are reported as malformed.") var maxLineBytes: Int = 1 << 20
    @Option(help: "Distinct tokens whose verdicts are remembered, so that repeats are verified once (0: off).")
    var verdictCache: Int = 8192
    @OptionGroup var distribution: AuditDistributionOptions

    static let inputFailure = ExitCode(1)
    static let usageFailure = ExitCode(2)
    static let keysUnavailable = ExitCode(3)

    func run() async throws {
        guard let outputFormat = OutputFormat(rawValue: format) else {
            throw Self.fail("--format must be ndjson or csv, not \(format)", Self.usageFailure)
        }
        guard inputArgument != nil || distribution.pipe else {
            throw Self.fail("give the log: a FILE, or - for standard input", Self.usageFailure)
        }
        if let threads, threads < 1 { throw Self.fail("--threads must be at least 1", Self.usageFailure) }
        if replay && replayStore != nil { throw Self.fail("use --replay or --replay-store, not both", Self.usageFailure) }

        // Every option and the input are checked before any key is fetched: a mistake exits 2 without network.
        var commandLineAt: Double?
        if let text = at {
            do { commandLineAt = try UnixTime.argument(text, option: "--at") } catch {
                throw Self.fail(error.reason, Self.usageFailure)
            }
        }
        let (plan, configuredAt) = try profilePlan()
        let time = commandLineAt ?? configuredAt ?? Date().timeIntervalSince1970

        let source: any ByteSource
        do {
            let raw: any ByteSource = input == "-" ? (distribution.pipe ? PipeByteSource() as any ByteSource : FileByteSource(handle: .standardInput))
                                                   : try FileByteSource(path: input)
            let name = input == "-" ? "standard input" : input
            source = input.hasSuffix(".gz") ? try GzipByteSource(raw, name: name) : try GzipByteSource.detecting(raw, name: name)
        } catch {
            throw Self.fail("\(error)", Self.usageFailure)
        }
        let sink: FileSink
        do { sink = try output.map { try FileSink(path: $0) } ?? FileSink(handle: .standardOutput) } catch {
            throw Self.fail("\(error)", Self.usageFailure)
        }
        var replayDetector = try makeReplayDetector()
        var options = AuditOptions(threads: threads ?? ProcessInfo.processInfo.activeProcessorCount, defaultTime: time,
                                   defaultNonce: policy.nonce ?? policy.nonceExact, maxLineBytes: maxLineBytes,
                                   cacheCapacity: verdictCache, format: outputFormat)
        let runID = try distribution.apply(to: &options, command: self)
        // Keys are fetched only now, once every option, the input and the output have been checked.
        let verifier = try await buildVerifier(plan)
        // A run spread over shards shares one record of first presentations on Redis (DESIGN §12).
        var runDetector: RunReplayDetector?
        if let runID, replayStore != nil, let store = (replayDetector as? ReplayCacheDetector)?.cache as? RedisReplayCache {
            runDetector = RunReplayDetector(store: store, run: runID, continueWithoutStore: distribution.replayFailureMode == .allow,
                                            ttlSeconds: distribution.runTtl)
            replayDetector = runDetector
        }
        let engine = AuditEngine(verifier: verifier, options: options)
        let terminal = isatty(STDERR_FILENO) == 1
        let showProgress = progress || (terminal && !distribution.pipe)
        var progressLine: (@Sendable (AuditProgress) -> Void)?
        if showProgress {
            progressLine = { update in
                let text: String = terminal ? "\r\u{1B}[2K" + update.line : update.line + "\n"
                FileHandle.standardError.write(Data(text.utf8))
            }
        }
        let report: (@Sendable (AuditProgress) -> Void)? = progressLine

        let work = HandOff((source, sink, replayDetector))
        let result: Result<AuditSummary, AuditError> = await Self.onOwnThread {
            let (source, sink, replay) = work.value
            do throws(AuditError) { return .success(try engine.run(source, output: sink, replay: replay, progress: report)) } catch {
                return .failure(error)
            }
        }
        if showProgress && terminal { FileHandle.standardError.write(Data("\n".utf8)) }
        var audit: AuditSummary
        switch result {
        case .success(let value):
            audit = value
            audit.runID = runID
            audit.shardAttempt = runDetector?.attempt
            audit.replayUnchecked = runDetector?.unchecked ?? 0
        case .failure(let error): throw Self.fail(error.description, Self.inputFailure)
        }

        let json = audit.json()
        if let path = summary, path != "-" {
            do { try Data(json.utf8).write(to: URL(fileURLWithPath: path)) } catch {
                throw Self.fail("cannot write the summary to \(path): \(error.localizedDescription)", Self.usageFailure)
            }
        } else if distribution.pipe {
            // A pipe's standard output holds verdict lines only: the summary goes nowhere unless asked for.
        } else if summary == "-" || output != nil {
            FileHandle.standardOutput.write(Data(json.utf8))
        } else {
            FileHandle.standardError.write(Data(json.utf8))
        }
        if let path = html {
            let name = input == "-" ? "standard input" : (input as NSString).lastPathComponent
            let page = HTMLReport(summary: audit, title: "Token audit of \(name)").render()
            do { try Data(page.utf8).write(to: URL(fileURLWithPath: path)) } catch {
                throw Self.fail("cannot write the HTML report to \(path): \(error.localizedDescription)", Self.usageFailure)
            }
        }
        if let error = audit.inputError {
            throw Self.fail(error.message, Self.inputFailure)
        }
    }

    // MARK: Profiles and keys

    /// The profiles to judge with and where their keys are, from --config or the policy options, and the
    /// configuration's time; nothing is fetched yet.
    private func profilePlan() throws -> ([(name: String?, profile: Profile, keys: [String])], Double?) {
        if let config {
            guard policy.provider == nil else { throw Self.fail("--config holds the profiles; do not give --provider as well", Self.usageFailure) }
            guard keys.isEmpty else { throw Self.fail("--config names each profile's keys; do not give --keys as well", Self.usageFailure) }
            guard !policy.shapesProfile else {
                throw Self.fail("--config holds the profiles' options; of the policy options only --nonce or --nonce-exact may be given with it", Self.usageFailure)
            }
            let configuration: ConfigurationFile
            do { configuration = try ConfigurationFile.load(path: config) } catch {
                throw Self.fail(error.reason, Self.usageFailure)
            }
            return (configuration.profiles.map { (name: $0.name, profile: $0.profile, keys: $0.keys) }, configuration.at)
        }
        do { return ([(name: nil, profile: try policy.profile(), keys: keys)], nil) } catch {
            throw Self.fail(error.reason + " (or give --config)", Self.usageFailure)
        }
    }

    /// Fetches or reads each profile's keys once and builds the verifier over those fixed sets.
    private func buildVerifier(_ plan: [(name: String?, profile: Profile, keys: [String])]) async throws -> MultiProfileVerifier {
        var members: [MultiProfileVerifier.Member] = []
        for entry in plan {
            let keySet = try await Self.loadKeys(entry.keys, profile: entry.profile)
            do { members.append(.init(name: entry.name, verifier: try IDTokenVerifier(profile: entry.profile, keys: keySet))) } catch {
                throw Self.fail((entry.name.map { "profile \"\($0)\": " } ?? "") + error.reason, Self.usageFailure)
            }
        }
        do { return try MultiProfileVerifier(members, nonceMode: policy.nonceMode) } catch {
            throw Self.fail(error.reason, Self.usageFailure)
        }
    }

    /// One key-set snapshot for the whole audit, so that every record is judged against the same keys: key
    /// files and archive directories merged, or one URL fetched once (DESIGN §5, through ``KeySourceResolver``).
    static func loadKeys(_ sources: [String], profile: Profile) async throws -> JWKSet {
        let source: any KeySource
        do {
            source = try KeySourceResolver.resolve(sources, defaultURL: profile.keysURL, cachePolicy: RemoteKeys.cachePolicy,
                                                   logger: RemoteKeys.logger())
        } catch where error.kind == .noUsableKeys {
            throw fail(error.description, keysUnavailable)
        } catch {
            throw fail(error.description, usageFailure)
        }
        let snapshot: Result<JWKSet, TokenError>
        do throws(TokenError) { snapshot = .success(try await source.keys(refreshingFor: nil)) } catch { snapshot = .failure(error) }
        if let remote = source as? HTTPKeySource { await remote.shutdown() }
        switch snapshot {
        case .success(let set): return set
        case .failure(let error): throw fail(error.message, keysUnavailable)
        }
    }

    private func makeReplayDetector() throws -> (any ReplayDetector)? {
        if replay { return MemoryReplayDetector() }
        guard let url = replayStore else { return nil }
        do {
            // An audit must not take a store outage for "not a replay": refuse, which stops the audit. Records are
            // judged at logged times, so entries live exp + leeway − at counted from now, not until an absolute
            // time that may already be past on Redis's clock.
            return ReplayCacheDetector(try RedisReplayCache(url: url, failureMode: .reject, expiry: .relativeToNow,
                                                            logger: RemoteKeys.logger()))
        } catch {
            throw Self.fail("--replay-store: \(error)", Self.usageFailure)
        }
    }

    // MARK: Helpers

    /// Runs `body` on a thread of its own (the audit blocks while its workers run) and resumes with its result.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = 1 << 22
            thread.start()
        }
    }

    static func fail(_ message: String, _ code: ExitCode) -> ExitCode {
        FileHandle.standardError.write(Data("idtoken audit: \(message)\n".utf8))
        return code
    }
}
