import IDTokenAudit
import IDTokenKit
import Testing

@Suite("In-memory replay detection")
struct ReplayDetectorTests {
    func entry(_ n: Int, issuer: String = "https://issuer.example") -> ReplayEntry {
        ReplayEntry(issuer: issuer, signatureDigest: SHA256.hash(Array("signature-\(n)".utf8)), expiresAt: 0)
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
