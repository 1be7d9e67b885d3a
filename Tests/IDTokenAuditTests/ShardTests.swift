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
            #expect(throws: AuditError.self) { try Shard(parsing: bad) }
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
        let verifier = try Sample.verifier()
        let whole = try AuditRun(bytes, verifier: verifier)
        var lines: [String] = []
        var parts: [(name: String, summary: AuditSummary)] = []
        for index in 0..<count {
            var options = AuditOptions(threads: 2, defaultTime: Sample.at, batchLines: 7)
            options.shard = try Shard(index: index, count: count)
            let sink = MemorySink()
            var summary = try AuditEngine(verifier: verifier, options: options).run(MemoryByteSource(bytes, chunkSize: 4096), output: sink)
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
        let verifier = try Sample.verifier()
        func shard(_ index: Int, _ count: Int, run: String = "r1") throws -> AuditSummary {
            var options = AuditOptions(threads: 1, defaultTime: Sample.at)
            options.shard = try Shard(index: index, count: count)
            var summary = try AuditEngine(verifier: verifier, options: options).run(MemoryByteSource(bytes))
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
        #expect(throws: AuditError.self) { try AuditSummary(json: try AuditRun(bytes, verifier: verifier).summary.json(), name: "whole") }
    }

    @Test("a damaged shard summary is refused, naming the file and what is wrong")
    func damagedSummariesAreRefused() throws {
        var options = AuditOptions(threads: 1, defaultTime: Sample.at)
        options.shard = try Shard(index: 0, count: 2)
        let text = try AuditEngine(verifier: try Sample.verifier(), options: options).run(MemoryByteSource(try Sample.bytes(Sample.log))).json()
        #expect(throws: Never.self) { try AuditSummary(json: text, name: "s0.json") }
        func refusal(_ damaged: String) -> String {
            do { _ = try AuditSummary(json: damaged, name: "s0.json"); return "" } catch { return error.message }
        }
        func replacing(_ old: String, _ new: String) -> String {
            #expect(text.contains(old), "\(old)")
            return text.replacingOccurrences(of: old, with: new)
        }
        #expect(refusal("not JSON") == "s0.json: not a JSON summary of idtoken audit")
        #expect(refusal("[1, 2]") == "s0.json: not a JSON summary of idtoken audit")
        #expect(refusal(replacing("\"records\":", "\"recordz\":")) == "s0.json: has no line and record counts")
        #expect(refusal(replacing("\"shard\": {", "\"shards\": {")).hasPrefix("s0.json: is not a shard's summary"))
        #expect(refusal(replacing("\"index\": 0, \"count\": 2", "\"index\": 2, \"count\": 2"))
                == "s0.json: its \"shard\" member has no valid index and count")
        #expect(refusal(replacing("\"series\": [\"valid\"", "\"series\": [7")) == "s0.json: its \"shard\" member has no time series")
        #expect(refusal(replacing("\"buckets\": [[", "\"buckets\": [[\"x\", [1]], [")) == "s0.json: a time bucket is malformed")
        // A timeline holds fewer than 240 buckets from its first to its last; a summary that claims more is refused.
        for far in ["99999999999", "-9223372036854775808"] {
            #expect(refusal(replacing("\"buckets\": [[", "\"buckets\": [[\(far), [1]], ["))
                    == "s0.json: a time series spans more than 240 buckets")
        }
    }

    @Test("pipe mode: one line out per line in, blank lines included, in order, with the numbering asked for")
    func pipeMode() throws {
        let bytes = Array("\n".utf8) + (try Sample.bytes(Sample.log)) + Array("\n\nnot a token\n".utf8)
        let lineCount = bytes.filter { $0 == 0x0A }.count
        var options = AuditOptions(threads: 2, defaultTime: Sample.at, batchLines: 7)
        options.pipe = true
        options.firstLine = 1001
        let sink = MemorySink()
        let summary = try AuditEngine(verifier: try Sample.verifier(), options: options)
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
        let verifier = try Sample.verifier()
        var parts: [(name: String, summary: AuditSummary)] = []
        var attempts: [Int: String] = [:]
        var validLine: (line: Int, at: Double)?
        for index in 0..<2 {
            var options = AuditOptions(threads: 1, defaultTime: Sample.at)
            options.shard = try Shard(index: index, count: 2)
            var results: [AuditResult] = []
            var summary = try AuditEngine(verifier: verifier, options: options).run(MemoryByteSource(bytes), onResult: { results.append($0) })
            summary.runID = "r"
            summary.shardAttempt = "attempt-\(index)"
            attempts[index] = "attempt-\(index)"
            if index == 1, let valid = results.first(where: { $0.isValid }) { validLine = (valid.line, valid.at) }
            parts.append(("s\(index)", try AuditSummary(json: summary.json(), name: "s\(index)")))
        }
        let claim = try #require(validLine)
        let before = try AuditSummary.merge(parts)
        var settled = before
        settled.settle(ShardSettlement(claims: [(claim.line, claim.at, "attempt-1", 2), (claim.line + 2, claim.at, "an-earlier-attempt", 2)],
                                       attempts: attempts, shardCount: 2))
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

@Suite("Merging the shards' verdict lines (idtoken audit merge --verdicts)")
struct VerdictMergeTests {
    /// The sample judged by one process with replays found, and what two shards on a shared store would have
    /// written when the shard of line `claimed` judged it before the other shard found the token's first line:
    /// `claimed` valid, and a later replay naming `claimed` as the first.
    struct Planted {
        let whole: AuditRun
        let shards: [[String]]
        let claimed: Int
        let first: Int
        let renamed: Int
    }

    static func planted() throws -> Planted {
        // The sample, with a replayed record presented once more at the end: a token replayed twice, whose first
        // replay is the claim a later shard overturns.
        var bytes = try Sample.bytes(Sample.log)
        let sample = try AuditRun(bytes, verifier: try Sample.verifier(), replay: MemoryReplayDetector())
        let replayed = try #require(sample.results.first { $0.error?.code == .replayed && $0.firstSeenLine != nil })
        let rawLines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        bytes += rawLines[replayed.line - 1] + [0x0A]
        let whole = try AuditRun(bytes, verifier: try Sample.verifier(), replay: MemoryReplayDetector())
        let replays = whole.results.filter { $0.error?.code == .replayed && $0.firstSeenLine != nil }
        let byFirst = Dictionary(grouping: replays, by: { $0.firstSeenLine! })
        let (first, again) = try #require(byFirst.filter { $0.value.count >= 2 }.min { $0.key < $1.key })
        let claimed = again[0], later = again[1]
        var lines = whole.output.split(separator: "\n").map(String.init)
        func render(_ r: AuditResult, error: TokenError?) -> String {
            var out: [UInt8] = []
            OutputFormat.ndjson.render(AuditResult(line: r.line, id: r.id, error: error, claims: r.claims, at: r.at,
                                                   signatureVerified: r.signatureVerified, profile: r.profile), into: &out)
            return String(decoding: out.dropLast(), as: UTF8.self)
        }
        let index = { (line: Int) in lines.firstIndex { $0.hasPrefix("{\"line\":\(line),") }! }
        lines[index(claimed.line)] = render(claimed, error: nil)
        let message = later.error!.message.replacingOccurrences(of: "line \(first);", with: "line \(claimed.line);")
        lines[index(later.line)] = render(later, error: TokenError(.replayed, claim: nil, message))
        let number = { (text: String) in Int(text.dropFirst("{\"line\":".count).prefix { $0.isNumber })! }
        let shards = (0..<2).map { shard in lines.filter { number($0) % 2 == shard } }
        return Planted(whole: whole, shards: shards, claimed: claimed.line, first: first, renamed: later.line)
    }

    static func merge(_ shards: [[String]], settlement: ShardSettlement,
                      records: [Int: Int]? = nil) throws(AuditError) -> (String, VerdictMerge.Outcome) {
        let sink = MemorySink()
        let files = shards.enumerated().map { k, lines in
            (name: "verdicts-\(k).ndjson", source: MemoryByteSource(Array(lines.map { $0 + "\n" }.joined().utf8), chunkSize: 300) as any ByteSource)
        }
        let counts = records ?? Dictionary(uniqueKeysWithValues: shards.enumerated().map { ($0.offset, $0.element.count) })
        let outcome = try VerdictMerge.merge(files, records: counts, shardCount: 2, settlement: settlement, into: sink)
        return (String(decoding: sink.bytes, as: UTF8.self), outcome)
    }

    @Test("the overturned claim becomes replayed of the earliest line and a replay naming it names the earliest: one process's lines")
    func settled() throws {
        let p = try Self.planted()
        let claimedShard = p.claimed % 2
        let settlement = ShardSettlement(claims: [(p.claimed, 0, "attempt-a", p.first)],
                                         attempts: [claimedShard: "attempt-a", 1 - claimedShard: "attempt-b"], shardCount: 2)
        let (unsettled, _) = try Self.merge(p.shards, settlement: ShardSettlement())
        #expect(unsettled != p.whole.output)
        let (merged, outcome) = try Self.merge(p.shards, settlement: settlement)
        #expect(merged == p.whole.output)
        #expect(outcome.lines == p.whole.results.count && outcome.settled == 1 && outcome.renamed == 1)
        let claimed = try #require(p.whole.results.first { $0.line == p.claimed })
        #expect(outcome.claims[p.claimed]?.issuer == claimed.claims.issuer && outcome.claims[p.claimed]?.subject == claimed.claims.subject)
    }

    @Test("a claim of an earlier run of the shard is left as the merged run wrote it")
    func earlierAttempt() throws {
        let p = try Self.planted()
        let settlement = ShardSettlement(claims: [(p.claimed, 0, "killed-run", p.first)], attempts: [0: "a", 1: "b"], shardCount: 2)
        let (merged, outcome) = try Self.merge(p.shards, settlement: settlement)
        #expect(outcome.settled == 0 && outcome.renamed == 1)
        #expect(merged.contains("{\"line\":\(p.claimed),") && merged != p.whole.output)
    }

    @Test("files that are not the shards' verdicts of the merged run are refused, named")
    func refusals() throws {
        let p = try Self.planted()
        func refused(_ shards: [[String]], settlement: ShardSettlement = ShardSettlement(), records: [Int: Int]? = nil,
                     saying words: String) {
            do {
                _ = try Self.merge(shards, settlement: settlement, records: records)
                Issue.record("merged, expected a refusal saying \(words)")
            } catch {
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
        refused([p.shards[0], p.shards[0]], saying: "both hold line")
        refused([p.shards[0], p.shards[1] + p.shards[0].prefix(1)], saying: "not in line order")
        let number = { (text: String) in Int(text.dropFirst("{\"line\":".count).prefix { $0.isNumber })! }
        refused([(p.shards[0] + p.shards[1]).sorted { number($0) < number($1) }, []], saying: "holds lines of shards")
        refused(p.shards, records: [0: p.shards[0].count + 1, 1: p.shards[1].count], saying: "verdicts-0.ndjson holds")
        refused([["line,id,valid"], p.shards[1]], saying: "is CSV")
        // The store lists a claim on a line the file says was refused: not the run of the shard that made it.
        let refusedLine = try #require(p.whole.results.first { !$0.isValid && $0.error?.code != .replayed }).line
        refused(p.shards, settlement: ShardSettlement(claims: [(refusedLine, 0, "a", 1)], attempts: [0: "a", 1: "a"], shardCount: 2),
                saying: "line \(refusedLine) is not the valid verdict")
    }
}
