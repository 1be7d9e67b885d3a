import Foundation
import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Auditing the bundled sample")
struct SampleAuditTests {
    @Test("the verdicts match what the generator computed independently")
    func matchesExpected() throws {
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier())
        let expected = try Sample.expected()
        #expect(run.summary.lines == expected["lines"] as? Int)
        #expect(run.summary.records == expected["records"] as? Int)
        #expect(run.summary.blankLines == expected["blankLines"] as? Int)
        #expect(run.summary.valid == expected["valid"] as? Int)
        #expect(run.summary.invalid == expected["invalid"] as? Int)
        #expect(run.summary.byError == expected["byError"] as? [String: Int])
        #expect(run.summary.inputError == nil)
    }

    @Test("with replay detection, the copies of accepted tokens are replays pointing at the first line")
    func replays() throws {
        let plain = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier())
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier(), replay: MemoryReplayDetector())
        let expected = try #require(try Sample.expected()["replaysWithReplayOption"] as? Int)
        #expect(run.summary.replays == expected)
        #expect(run.summary.byError["replayed"] == expected)
        #expect(run.summary.valid == plain.summary.valid - expected)
        for result in run.results where result.error?.code == .replayed {
            let first = try #require(result.firstSeenLine)
            #expect(first < result.line)
            let original = try #require(plain.results.first { $0.line == first })
            #expect(original.isValid)
            #expect(original.claims == result.claims)
        }
        // Only accepted tokens take a replay slot: every refused record is refused for the same reason as before.
        for (a, b) in zip(plain.results, run.results) where !a.isValid {
            #expect(a.error?.code == b.error?.code)
        }
    }

    @Test("the summary's counts equal the per-record results")
    func summaryMatchesRecords() throws {
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier(), replay: MemoryReplayDetector())
        let s = run.summary
        #expect(s.records == run.results.count)
        #expect(s.valid == run.results.filter(\.isValid).count)
        #expect(s.invalid == run.results.filter { !$0.isValid }.count)
        var byError: [String: Int] = [:]
        for r in run.results { if let e = r.error { byError[e.code.rawValue, default: 0] += 1 } }
        #expect(s.byError == byError)
        var byIssuer: [String: Int] = [:]
        for r in run.results { if let i = r.claims.issuer { byIssuer[i, default: 0] += 1 } }
        #expect(s.byIssuer.counts == byIssuer)
        var byKid: [String: Int] = [:]
        for r in run.results { if let k = r.claims.kid { byKid[k, default: 0] += 1 } }
        #expect(s.byKid.counts == byKid)
        #expect(s.usedAfterExpiry == run.results.filter { $0.error?.code == .expired }.count)
        for (kid, usage) in s.keyUsage {
            let uses = run.results.filter { $0.claims.kid == kid && $0.signatureVerified }
            #expect(usage.uses == uses.count)
            #expect(usage.firstUse == uses.map(\.at).min())
            #expect(usage.lastUse == uses.map(\.at).max())
        }
        // Every record with a token went to the judge or the cache; unreadable lines went to neither.
        let reader = LineReader(MemoryByteSource(try Sample.bytes(Sample.log)))
        var withToken = 0
        while let line = reader.next() {
            if let r = RecordExtractor().extract(line), r.token != nil, r.problem == nil { withToken += 1 }
        }
        #expect(s.verifications + s.cacheHits == withToken)
        let timelineTotal = s.verdictTimeline.rows.reduce(0) { $0 + $1.counts.reduce(0, +) }
        #expect(timelineTotal == s.records)
        #expect(s.firstAt == run.results.map(\.at).min())
        #expect(s.lastAt == run.results.map(\.at).max())
    }

    @Test("the Firebase key rotation shows in the key usage: key 1 until noon, key 2 from noon")
    func keyRotation() throws {
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier())
        let key1 = try #require(run.summary.keyUsage["a1f0c2d3e4b5a6978877665544332211ffeeddcc"])
        let key2 = try #require(run.summary.keyUsage["b2e1d3c4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0"])
        #expect(key1.firstUse < key2.firstUse)
        #expect(key2.firstUse >= Sample.at - 3600)
        #expect(key1.issuer == "https://securetoken.google.com/idtokenkit-sample")
    }

    @Test("output order is the input order, identical with 1 thread and with several", arguments: [OutputFormat.ndjson, .csv])
    func orderIndependentOfThreads(format: OutputFormat) throws {
        let bytes = try Sample.bytes(Sample.log)
        let one = try AuditRun(bytes, verifier: try Sample.verifier(), threads: 1, format: format, replay: MemoryReplayDetector(), batchLines: 1)
        let four = try AuditRun(bytes, verifier: try Sample.verifier(), threads: 4, format: format, replay: MemoryReplayDetector(), batchLines: 3)
        let eight = try AuditRun(bytes, verifier: try Sample.verifier(), threads: 8, format: format, replay: MemoryReplayDetector(), cache: 0, batchLines: 2)
        #expect(!one.output.isEmpty)
        #expect(one.output == four.output)
        #expect(one.output == eight.output)
        #expect(one.results.map(\.line) == one.results.map(\.line).sorted())
        #expect(Set(one.results.map(\.line)).count == one.results.count)
    }

    @Test("the kernel's lanes give the libcrypto run's output byte for byte, and the verdicts the generator computed",
          arguments: RSABatchImplementation.allCases.filter { $0.isAvailable && $0 != .libcrypto })
    func batchKernelAgrees(implementation: RSABatchImplementation) throws {
        let bytes = try Sample.bytes(Sample.log)
        // Batches of 64 lines on two workers, without the verdict cache, so that every record is verified and lanes
        // mix the providers' keys and the refused signatures.
        let single = try AuditRun(bytes, verifier: try Sample.verifier(), threads: 2, replay: MemoryReplayDetector(), cache: 0,
                                  batchLines: 64, signatures: .libcrypto)
        let batched = try AuditRun(bytes, verifier: try Sample.verifier(), threads: 2, replay: MemoryReplayDetector(), cache: 0,
                                   batchLines: 64, signatures: implementation)
        #expect(!single.output.isEmpty)
        #expect(batched.output == single.output)
        #expect(batched.summary.verifications == single.summary.verifications && batched.summary.cacheHits == 0)
        let expected = try Sample.expected()
        #expect(batched.summary.records == expected["records"] as? Int)
        #expect(batched.summary.byError.filter { $0.key != "replayed" } == (expected["byError"] as? [String: Int])?.filter { $0.key != "replayed" })
    }

    @Test("the HTML report is one self-contained page with its three plots")
    func htmlReport() throws {
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier(), replay: MemoryReplayDetector())
        let page = HTMLReport(summary: run.summary, title: "Sample <audit>").render()
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(page.contains("Sample &lt;audit&gt;"))
        #expect(page.components(separatedBy: "<svg").count - 1 == 3)
        #expect(!page.contains("<script"))
        #expect(!page.contains("src=\"http"))
        #expect(!page.contains("href=\"http"))
        for code in run.summary.byError.keys { #expect(page.contains(code)) }
        for kid in run.summary.keyUsage.keys { #expect(page.contains(kid)) }
    }
}
