import ArgumentParser
import Foundation
import IDTokenAudit
import IDTokenKitRedis

/// `idtoken audit merge`: one summary (and one HTML report) from the summaries of the shards of one audit,
/// equal to what one process would have written for the whole input (DESIGN §12).
struct AuditMergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine the summaries of the shards of one audit (--shard I/N) into the summary of the whole log.",
        discussion: """
        Every shard's summary (--summary FILE of each `idtoken audit --shard I/N`) of one run, each shard once. \
        Summaries of different runs, a shard given twice, or a missing shard are refused, naming them (exit 2). \
        The merged summary goes to --summary (default: standard output).

        With --shard-verdicts (each shard's --output, NDJSON) and --verdicts OUT, the shards' verdict lines are \
        merged by line into OUT: the lines one process would have written for the whole log, in line order. \
        The files are read as streams (one line of each at a time). Each file must be the --output of the same \
        run of its shard as the summary given (its line count is checked against the summary's records).

        With --replay-store (the Redis the shards found replays across shards in), the verdicts a later shard \
        overturned are settled in the summary and in the merged verdict lines: a shard that judged line 900 \
        the first acceptance of a token before another shard found it on line 12 wrote valid on line 900; the \
        merge writes it `replayed` of line 12, and replays that named line 900 as the first name line 12.

        Example: idtoken audit merge summary-*.json --replay-store redis://127.0.0.1:6379 \
        --shard-verdicts verdicts-*.ndjson --verdicts verdicts.ndjson --summary summary.json --html audit.html
        """
    )

    @Argument(help: "The shards' summaries (JSON files).") var summaries: [String]
    @Option(help: "Write the merged summary to this file (- for standard output, the default).") var summary: String = "-"
    @Option(help: "Write a self-contained HTML report of the whole log to this file.") var html: String?
    @Option(help: "The report's title.") var title: String = "Token audit"
    @Option(help: "The Redis store the shards found replays in (--replay-store): the verdicts a later shard overturned are settled from it.")
    var replayStore: String?
    @Option(parsing: .upToNextOption,
            help: ArgumentHelp("The shards' verdict files (each shard's --output, NDJSON), to merge into --verdicts.", valueName: "file"))
    var shardVerdicts: [String] = []
    @Option(help: ArgumentHelp("Write the merged verdict lines, in line order, to this file (- for standard output when --summary names a file).",
                               valueName: "out"))
    var verdicts: String?

    func run() throws {
        guard !summaries.isEmpty else { throw AuditCommand.fail("give the shards' summaries", AuditCommand.usageFailure) }
        if verdicts == nil && !shardVerdicts.isEmpty {
            throw AuditCommand.fail("--shard-verdicts needs --verdicts OUT, where the merged verdict lines go", AuditCommand.usageFailure)
        }
        if let verdicts {
            guard !shardVerdicts.isEmpty else {
                throw AuditCommand.fail("--verdicts needs the shards' verdict files: --shard-verdicts FILE...", AuditCommand.usageFailure)
            }
            guard verdicts != "-" || summary != "-" else {
                throw AuditCommand.fail("--verdicts - and the summary both on standard output: give --summary FILE", AuditCommand.usageFailure)
            }
            let target = URL(fileURLWithPath: verdicts).standardizedFileURL.resolvingSymlinksInPath().path
            for path in shardVerdicts + summaries where URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path == target {
                throw AuditCommand.fail("--verdicts \(verdicts) is one of the files merged", AuditCommand.usageFailure)
            }
        }
        var parts: [(name: String, summary: AuditSummary)] = []
        for path in summaries {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw AuditCommand.fail("merge: cannot read \(path)", AuditCommand.usageFailure)
            }
            do { parts.append((path, try AuditSummary(json: String(decoding: data, as: UTF8.self), name: path))) } catch {
                throw AuditCommand.fail("merge: \(error.message)", AuditCommand.usageFailure)
            }
        }
        var merged: AuditSummary
        do { merged = try AuditSummary.merge(parts) } catch {
            throw AuditCommand.fail("merge: \(error.message)", AuditCommand.usageFailure)
        }
        let count = parts[0].summary.shard?.count ?? 1
        var settlement = ShardSettlement()
        if let replayStore, let run = parts[0].summary.runID {
            let store: RedisReplayCache
            do { store = try RedisReplayCache(url: replayStore, logger: RemoteKeys.logger()) } catch {
                throw AuditCommand.fail("--replay-store: \(error)", AuditCommand.usageFailure)
            }
            let overturned: [(line: Int, at: Double, attempt: String, earlier: Int)]
            do { overturned = try store.overturnedClaims(run: run) } catch {
                throw AuditCommand.fail("merge: \(error.message)", AuditCommand.inputFailure)
            }
            var attempts: [Int: String] = [:]
            for part in parts { if let shard = part.summary.shard, let attempt = part.summary.shardAttempt { attempts[shard.index] = attempt } }
            settlement = ShardSettlement(claims: overturned, attempts: attempts, shardCount: count)
        }
        var claims: [Int: (issuer: String?, subject: String?)] = [:]
        if let verdicts {
            var records: [Int: Int] = [:]
            for part in parts { if let shard = part.summary.shard { records[shard.index] = part.summary.records } }
            let outcome = try mergeVerdicts(into: verdicts, records: records, shardCount: count, settlement: settlement)
            claims = outcome.claims
        }
        merged.settle(settlement) { claims[$0] }
        let json = merged.json()
        if summary == "-" {
            FileHandle.standardOutput.write(Data(json.utf8))
        } else {
            do { try Data(json.utf8).write(to: URL(fileURLWithPath: summary)) } catch {
                throw AuditCommand.fail("cannot write the summary to \(summary): \(error.localizedDescription)", AuditCommand.usageFailure)
            }
        }
        if let html {
            let page = HTMLReport(summary: merged, title: title).render()
            do { try Data(page.utf8).write(to: URL(fileURLWithPath: html)) } catch {
                throw AuditCommand.fail("cannot write the HTML report to \(html): \(error.localizedDescription)", AuditCommand.usageFailure)
            }
        }
        if let error = merged.inputError { throw AuditCommand.fail(error.message, AuditCommand.inputFailure) }
    }

    /// Merges the shards' verdict files into `path`, settled; a merge that fails leaves no file behind.
    private func mergeVerdicts(into path: String, records: [Int: Int], shardCount: Int,
                               settlement: ShardSettlement) throws -> VerdictMerge.Outcome {
        var files: [(name: String, source: any ByteSource)] = []
        for name in shardVerdicts {
            do { files.append((name, try FileByteSource(path: name, chunkSize: 64 * 1024))) } catch {
                throw AuditCommand.fail("merge: \(error.message)", AuditCommand.usageFailure)
            }
        }
        let sink: FileSink
        do { sink = try path == "-" ? FileSink(handle: .standardOutput) : FileSink(path: path) } catch {
            throw AuditCommand.fail("cannot write the verdicts to \(path): \(error)", AuditCommand.usageFailure)
        }
        do throws(AuditError) {
            return try VerdictMerge.merge(files, records: records, shardCount: shardCount, settlement: settlement, into: sink)
        } catch {
            if path != "-" { try? FileManager.default.removeItem(atPath: path) }
            throw AuditCommand.fail("merge: \(error.message)", AuditCommand.usageFailure)
        }
    }
}
