import IDTokenAudit
import IDTokenKit
import Testing

@Suite("In-memory replay detection")
struct ReplayDetectorTests {
    func entry(_ n: Int, issuer: String = "https://issuer.example") -> ReplayEntry {
        ReplayEntry(issuer: issuer, tokenDigest: SHA256.hash(Array("header.payload-\(n)".utf8)), expiresAt: 0)
    }

    @Test("remembers the first line of every accepted token while its table grows")
    func growth() throws {
        let detector = MemoryReplayDetector(initialCapacity: 16)
        for n in 0..<50_000 {
            #expect(try detector.record(entry(n), line: n + 1, at: 0) == nil)
        }
        #expect(detector.count == 50_000)
        for n in stride(from: 0, to: 50_000, by: 997) {
            #expect(try detector.record(entry(n), line: 99_999_999, at: 0) == n + 1)
        }
        #expect(detector.count == 50_000)
    }

    @Test("the same signature from two issuers is two tokens")
    func issuerIsPartOfTheKey() throws {
        let detector = MemoryReplayDetector()
        #expect(try detector.record(entry(1, issuer: "a"), line: 1, at: 0) == nil)
        #expect(try detector.record(entry(1, issuer: "b"), line: 2, at: 0) == nil)
        #expect(try detector.record(entry(1, issuer: "a"), line: 3, at: 0) == 1)
        #expect(try detector.record(entry(1, issuer: "b"), line: 4, at: 0) == 2)
    }
}

@Suite("A replay stage that stops answering")
struct FailingReplayStageTests {
    /// Answers for the first `answers` tokens, then fails as an unreachable store does.
    final class FlakyDetector: ReplayDetector {
        var answers: Int
        init(answers: Int) { self.answers = answers }
        func record(_ entry: ReplayEntry, line: Int, at: Double) throws(TokenError) -> Int? {
            guard answers > 0 else { throw TokenError(.replayStoreUnavailable, "the replay store could not answer: unavailable") }
            answers -= 1
            return nil
        }
    }

    @Test("the audit stops at the first unanswered check; the records before it are written")
    func stops() throws {
        let options = AuditOptions(threads: 2, defaultTime: Sample.at, batchLines: 4)
        let sink = MemorySink()
        var seen: [AuditResult] = []
        #expect(throws: AuditError.self) {
            _ = try AuditEngine(verifier: try Sample.verifier(), options: options)
                .run(MemoryByteSource(try Sample.bytes(Sample.log)), output: sink, replay: FlakyDetector(answers: 5),
                     onResult: { seen.append($0) })
        }
        let lines = String(decoding: sink.bytes, as: UTF8.self).split(separator: "\n")
        #expect(seen.filter(\.isValid).count == 5)
        #expect(lines.count == seen.count)
        #expect(seen.map(\.line) == seen.map(\.line).sorted())
        let reference = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier())
        #expect(seen.count < reference.results.count)
    }
}
