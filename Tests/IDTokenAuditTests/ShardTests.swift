import Foundation
import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Shards, pipe mode and merged summaries (DESIGN §12)")
struct ShardTests {
    @Test("I/N parses; a malformed or out-of-range spec is refused")
    func parsing() throws {
        let shard = try Shard(parsing: "2/7")
        #expect(shard.index == 2 && shard.count == 7)
        #expect(shard.contains(line: 2) && shard.contains(line: 9) && !shard.contains(line: 3) && !shard.contains(line: 7))
        for bad in ["7/7", "-1/3", "1/0", "1", "a/2", "1/2/3", ""] {
            #expect(throws: ShardSpecError.self) { try Shard(parsing: bad) }
        }
    }

    @Test("the environment of a Kubernetes Indexed Job or an AWS Batch array job names the shard; errors name the variable")
    func environment() throws {
        #expect(try Shard.fromEnvironment([:]) == nil)
        let k8s = try #require(try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "4"]))
        #expect(k8s.shard == (try Shard(index: 3, count: 4)))
        #expect(k8s.source.contains("JOB_COMPLETION_INDEX=3"))
        let aws = try #require(try Shard.fromEnvironment(["AWS_BATCH_JOB_ARRAY_INDEX": "0", "AWS_BATCH_JOB_ARRAY_SIZE": "2"]))
        #expect(aws.shard == (try Shard(index: 0, count: 2)))
        let cases: [([String: String], String)] = [
            (["JOB_COMPLETION_INDEX": "1"], "JOB_COMPLETIONS"),
            (["JOB_COMPLETION_INDEX": "x", "JOB_COMPLETIONS": "2"], "JOB_COMPLETION_INDEX"),
            (["JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "2"], "JOB_COMPLETION_INDEX=2 is out of range"),
            (["AWS_BATCH_JOB_ARRAY_INDEX": "0", "AWS_BATCH_JOB_ARRAY_SIZE": "0"], "AWS_BATCH_JOB_ARRAY_SIZE"),
        ]
        for (environment, named) in cases {
            do {
                _ = try Shard.fromEnvironment(environment)
                Issue.record("\(environment) was accepted")
            } catch {
                #expect(error.message.contains(named), "\(error.message)")
            }
        }
    }

    /// Audits the sample as `count` shards and as one process; the shards' verdict lines, sorted by line, are
    /// the one process's, and their merged summary is its summary.
    @Test("N shards give one process's verdicts, and their merged summary is its summary", arguments: [1, 2, 4, 7])
    func shardsMerge(count: Int) throws {
        let bytes = try Sample.bytes(Sample.log)
        let judge = try Sample.judge()
        let whole = try AuditRun(bytes, judge: judge)
        var lines: [String] = []
        var parts: [(name: String, summary: AuditSummary)] = []
        for index in 0..<count {
            var options = AuditOptions(threads: 2, defaultTime: Sample.at, batchLines: 7)
            options.shard = try Shard(index: index, count: count)
            let sink = MemorySink()
            var summary = try AuditEngine(judge: judge, options: options).run(MemoryByteSource(bytes, chunkSize: 4096), output: sink)
            summary.runID = "test-run"
            #expect(summary.lines == whole.summary.lines)
            lines += String(decoding: sink.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            // Through the JSON a shard writes, as `idtoken audit merge` reads it.
            parts.append(("shard-\(index).json", try AuditSummary(json: summary.json(), name: "shard-\(index).json")))
        }
        func lineNumber(_ text: String) -> Int { Int(text.dropFirst(8).prefix { $0.isNumber })! }
        #expect(lines.sorted { lineNumber($0) < lineNumber($1) } == whole.output.split(separator: "\n").map(String.init))
        let merged = try AuditSummary.merge(parts.reversed())
        #expect(ShardTests.withoutTiming(merged.json()) == ShardTests.withoutTiming(whole.summary.json()))
        #expect(merged.verdictTimeline.rows.map(\.counts) == whole.summary.verdictTimeline.rows.map(\.counts))
        #expect(merged.verdictTimeline.width == whole.summary.verdictTimeline.width)
    }

    @Test("merge refuses summaries of different runs, a shard twice, a missing shard, naming them")
    func mergeRefuses() throws {
        let bytes = try Sample.bytes(Sample.log)
        let judge = try Sample.judge()
        func shard(_ index: Int, _ count: Int, run: String = "r1") throws -> AuditSummary {
            var options = AuditOptions(threads: 1, defaultTime: Sample.at)
            options.shard = try Shard(index: index, count: count)
            var summary = try AuditEngine(judge: judge, options: options).run(MemoryByteSource(bytes))
            summary.runID = run
            return try AuditSummary(json: summary.json(), name: "x")
        }
        let a = try shard(0, 3), b = try shard(1, 3), c = try shard(2, 3), other = try shard(2, 3, run: "r2")
        func refusal(_ parts: [(String, AuditSummary)]) -> String {
            do { _ = try AuditSummary.merge(parts.map { (name: $0.0, summary: $0.1) }); return "" } catch { return error.message }
        }
        #expect(refusal([("a", a), ("b", b), ("other", other)]).contains("other is of run r2"))
        #expect(refusal([("a", a), ("b", b), ("b2", b), ("c", c)]).contains("b and b2 are both shard 1/3"))
        #expect(refusal([("a", a), ("c", c)]).contains("missing shard 1/3"))
        #expect(refusal([("a", a), ("b", b), ("c", c)]) == "")
        #expect(throws: SummaryMergeError.self) { try AuditSummary(json: try AuditRun(bytes, judge: judge).summary.json(), name: "whole") }
    }

    @Test("pipe mode: one line out per line in, blank lines included, in order, with the numbering asked for")
    func pipeMode() throws {
        let bytes = Array("\n".utf8) + (try Sample.bytes(Sample.log)) + Array("\n\nnot a token\n".utf8)
        let lineCount = bytes.filter { $0 == 0x0A }.count
        var options = AuditOptions(threads: 2, defaultTime: Sample.at, batchLines: 7)
        options.pipe = true
        options.firstLine = 1001
        let sink = MemorySink()
        let summary = try AuditEngine(judge: try Sample.judge(), options: options)
            .run(MemoryByteSource(bytes, chunkSize: 512), output: sink, replay: MemoryReplayDetector())
        let out = String(decoding: sink.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(out.count == lineCount)
        for (k, line) in out.enumerated() { #expect(line.hasPrefix("{\"line\":\(1001 + k),")) }
        #expect(out.first!.contains("\"error\":\"malformed\"") && out.first!.contains("blank"))
        #expect(summary.lines == lineCount)
        #expect(summary.replays > 0)
    }

    static func withoutTiming(_ json: String) -> String {
        json.split(separator: "\n").filter { line in
            !["elapsedSeconds", "tokensPerSecond", "cpuSeconds", "tokensPerCPUSecond", "verifications", "cacheHits", "threads"]
                .contains { line.contains("\"\($0)\"") }
        }.joined(separator: "\n")
    }
}

@Suite("Settling claims a later shard overturned")
struct SettlementTests {
    @Test("an overturned claim of the merged attempt becomes a replay of the earliest line; an earlier attempt's is left alone")
    func settle() throws {
        let bytes = try Sample.bytes(Sample.log)
        let judge = try Sample.judge()
        var parts: [(name: String, summary: AuditSummary)] = []
        var attempts: [Int: String] = [:]
        var validLine: (line: Int, at: Double)?
        for index in 0..<2 {
            var options = AuditOptions(threads: 1, defaultTime: Sample.at)
            options.shard = try Shard(index: index, count: 2)
            var results: [AuditResult] = []
            var summary = try AuditEngine(judge: judge, options: options).run(MemoryByteSource(bytes), onResult: { results.append($0) })
            summary.runID = "r"
            summary.shardAttempt = "attempt-\(index)"
            attempts[index] = "attempt-\(index)"
            if index == 1, let valid = results.first(where: { $0.isValid }) { validLine = (valid.line, valid.at) }
            parts.append(("s\(index)", try AuditSummary(json: summary.json(), name: "s\(index)")))
        }
        let claim = try #require(validLine)
        let before = try AuditSummary.merge(parts)
        var settled = before
        settled.settle(overturned: [(claim.line, claim.at, "attempt-1", 2), (claim.line + 2, claim.at, "an-earlier-attempt", 2)],
                       attempts: attempts, shardCount: 2)
        #expect(settled.valid == before.valid - 1)
        #expect(settled.invalid == before.invalid + 1)
        #expect(settled.replays == before.replays + 1)
        #expect(settled.byError["replayed"] == (before.byError["replayed"] ?? 0) + 1)
        #expect(settled.replayExamples.contains { $0.line == claim.line && $0.firstLine == 2 })
        let column = { (t: Timeline, k: Int) in t.rows.reduce(0) { $0 + $1.counts[k] } }
        let replayed = 1 + TokenError.Code.allCases.firstIndex(of: .replayed)!
        #expect(column(settled.verdictTimeline, 0) == column(before.verdictTimeline, 0) - 1)
        #expect(column(settled.verdictTimeline, replayed) == column(before.verdictTimeline, replayed) + 1)
    }
}
