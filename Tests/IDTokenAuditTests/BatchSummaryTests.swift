import Foundation
import IDTokenAudit
import IDTokenKit
import JOSE
import Testing

/// Each worker counts its batches' results, and the ordered consumer merges those counts
/// (`AuditSummary.absorb(batch:)`) unless a capped table could fill, when it adds the batch's results one by one.
/// Either way, the summary must be the one that adding every result in input order gives.
@Suite("Summaries counted batch by batch in the workers")
struct BatchSummaryTests {
    /// The summary that adding each result in input order gives.
    static func counted(_ results: [AuditResult]) -> AuditSummary {
        var summary = AuditSummary()
        for result in results { summary.add(result) }
        return summary
    }

    static func expectSame(_ a: AuditSummary, _ b: AuditSummary, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.records == b.records, sourceLocation: sourceLocation)
        #expect(a.valid == b.valid, sourceLocation: sourceLocation)
        #expect(a.invalid == b.invalid, sourceLocation: sourceLocation)
        #expect(a.byError == b.byError, sourceLocation: sourceLocation)
        #expect(a.byIssuer == b.byIssuer, sourceLocation: sourceLocation)
        #expect(a.byAudience == b.byAudience, sourceLocation: sourceLocation)
        #expect(a.byKid == b.byKid, sourceLocation: sourceLocation)
        #expect(a.byProfile == b.byProfile, sourceLocation: sourceLocation)
        #expect(a.keyUsage == b.keyUsage, sourceLocation: sourceLocation)
        #expect(a.usedAfterExpiry == b.usedAfterExpiry, sourceLocation: sourceLocation)
        #expect(a.expiredExamples == b.expiredExamples, sourceLocation: sourceLocation)
        #expect(a.replays == b.replays, sourceLocation: sourceLocation)
        #expect(a.firstAt == b.firstAt, sourceLocation: sourceLocation)
        #expect(a.lastAt == b.lastAt, sourceLocation: sourceLocation)
        for (x, y) in [(a.verdictTimeline, b.verdictTimeline), (a.keyTimeline, b.keyTimeline)] {
            #expect(x.series == y.series, sourceLocation: sourceLocation)
            #expect(x.width == y.width, sourceLocation: sourceLocation)
            #expect(x.rows.map(\.start) == y.rows.map(\.start), sourceLocation: sourceLocation)
            #expect(x.rows.map(\.counts) == y.rows.map(\.counts), sourceLocation: sourceLocation)
        }
    }

    @Test("the bundled sample, in batches of 1 to 64 lines on 1 to 4 threads", arguments: [(1, 1), (2, 5), (3, 7), (4, 64)])
    func sample(threads: Int, batchLines: Int) throws {
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier(), threads: threads, batchLines: batchLines)
        #expect(run.summary.records > 100)
        #expect(run.summary.keyUsage.count >= 2)
        BatchSummaryTests.expectSame(run.summary, BatchSummaryTests.counted(run.results))
    }

    /// Forged tokens of 1,500 issuers and audiences between the sample's records: the issuer and audience tables
    /// fill (1,000 values each), and which values they keep depends on the input order.
    @Test("a log whose issuers and audiences overflow their tables keeps the values seen first")
    func cappedTables() throws {
        func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }
        let sample = String(decoding: try Sample.bytes(Sample.log), as: UTF8.self).split(separator: "\n").map(String.init)
        var lines: [String] = []
        for k in 0..<1500 {
            let payload = "{\"iss\":\"https://issuer-\(k * 7919 % 1500).example\",\"aud\":\"client-\(k % 1200)\",\"sub\":\"u\",\"exp\":\(Int(Sample.at) + k)}"
            lines.append(b64("{\"alg\":\"RS256\",\"kid\":\"forged-\(k % 40)\"}") + "." + b64(payload) + "." + b64(String(repeating: "s", count: 256)))
            if k < sample.count { lines.append(sample[k]) }
        }
        let bytes = Array(lines.joined(separator: "\n").utf8)
        for (threads, batchLines) in [(1, 300), (3, 7)] {
            let run = try AuditRun(bytes, verifier: try Sample.verifier(), threads: threads, batchLines: batchLines)
            #expect(run.summary.byIssuer.otherCount > 0)
            #expect(run.summary.byAudience.otherCount > 0)
            BatchSummaryTests.expectSame(run.summary, BatchSummaryTests.counted(run.results))
        }
    }

    /// Records whose times jump ahead by days between batches: a batch's timeline, at the width its own few times
    /// need, must be brought to the summary's width and merged, sometimes past the span the summary's timeline
    /// holds (which then coarsens); the rows must be those of counting every time in order.
    @Test("timelines of batches far apart in time merge as if every time were counted in order", arguments: [(1, 5), (3, 7)])
    func timelinesFarApart(threads: Int, batchLines: Int) throws {
        let tokens = String(decoding: try Sample.bytes(Sample.log), as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("eyJ") }.prefix(60)
        #expect(tokens.count >= 20)
        var lines: [String] = []
        for (k, token) in tokens.enumerated() {
            // A minute apart within a group of ten, then a jump of 1, 3 or 9 days (up and back down).
            let at = Int(Sample.at) + (k % 10) * 60 + [0, 86_400, 3 * 86_400, 9 * 86_400, 2 * 86_400, 0][(k / 10) % 6]
            lines.append("{\"at\":\(at),\"token\":\"\(token)\"}")
        }
        let run = try AuditRun(Array(lines.joined(separator: "\n").utf8), verifier: try Sample.verifier(), threads: threads,
                               batchLines: batchLines)
        #expect(run.summary.records == tokens.count)
        #expect(run.summary.verdictTimeline.width > 60)
        BatchSummaryTests.expectSame(run.summary, BatchSummaryTests.counted(run.results))
    }
}
