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
        """
    )

    @Argument(help: "The shards' summaries (JSON files).") var summaries: [String]
    @Option(help: "Write the merged summary to this file (- for standard output, the default).") var summary: String = "-"
    @Option(help: "Write a self-contained HTML report of the whole log to this file.") var html: String?
    @Option(help: "The report's title.") var title: String = "Token audit"
    @Option(help: "The Redis store the shards found replays in (--replay-store): the verdicts a later shard overturned are settled from it.")
    var replayStore: String?

    func run() throws {
        guard !summaries.isEmpty else { throw AuditCommand.fail("give the shards' summaries", AuditCommand.usageFailure) }
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
        if let replayStore, let run = parts[0].summary.runID, let count = parts[0].summary.shard?.count {
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
            merged.settle(overturned: overturned, attempts: attempts, shardCount: count)
        }
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
}
