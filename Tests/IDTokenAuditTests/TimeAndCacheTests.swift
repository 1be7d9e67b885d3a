import Foundation
import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Judging repeated tokens at different times")
struct TimeAndCacheTests {
    @Test("one token judged at times out of order: each verdict follows its own time, cache or not",
          arguments: [(0, 3), (16_384, 1), (16_384, 3)])
    func outOfOrderTimes(cache: Int, threads: Int) throws {
        let tokens = try Sample.validTokens()
        let (token, claims) = try #require(tokens["firebase"])
        let iat = try #require(claims["iat"] as? Double ?? (claims["iat"] as? Int).map(Double.init))
        let exp = try #require(claims["exp"] as? Double ?? (claims["exp"] as? Int).map(Double.init))
        let times: [(Double, TokenError.Code?)] = [
            (iat + 10, nil), (exp + 3600, .expired), (iat + 20, nil), (iat - 3600, .issuedInFuture),
            (exp + 59, nil), (exp + 60, .expired), (iat - 61, .issuedInFuture), (iat - 60, nil), (exp + 3600, .expired),
        ]
        let log = times.enumerated().map { record(token, at: $1.0, id: "r\($0)") }.joined(separator: "\n")
        let run = try AuditRun(Array(log.utf8), verifier: try Sample.verifier(), threads: threads, cache: cache, batchLines: 2)
        #expect(run.results.map { $0.error?.code } == times.map(\.1))
        #expect(run.results.map(\.at) == times.map(\.0))
        #expect(run.results.map(\.id) == times.indices.map { RecordID.string("r\($0)") })
        // Every record is either verified or answered from the cache.
        #expect(run.summary.verifications + run.summary.cacheHits == times.count)
        if cache == 0 {
            #expect(run.summary.verifications == times.count)
        } else if threads == 1 {
            // One worker: r2 (iat + 20 s) is judged after r0 (iat + 10 s) has stored its verdict, valid at both.
            #expect(run.summary.cacheHits >= 1)
        }
        // With several workers, batches judged at the same moment may each verify before either has stored its
        // verdict, so which records hit depends on timing; the verdicts above do not.
    }

    @Test("identical tokens at the same time are verified once, whatever the threads", arguments: [1, 3])
    func verifiedOnce(threads: Int) throws {
        let (token, claims) = try #require(try Sample.validTokens()["apple"])
        let iat = try #require((claims["iat"] as? Int).map(Double.init))
        let log = (0..<50).map { record(token, at: iat + Double($0)) }.joined(separator: "\n")
        // One-line batches: with three workers, the same token is judged by several of them at the same moment,
        // and those that meet it while another judges it wait for that verdict.
        for _ in 0..<5 {
            let run = try AuditRun(Array(log.utf8), verifier: try Sample.verifier(), threads: threads, batchLines: threads == 1 ? 512 : 1)
            #expect(run.summary.valid == 50)
            #expect(run.summary.verifications == 1)
            #expect(run.summary.cacheHits == 49)
        }
    }

    @Test("a nonce is part of the verdict: the same token with another nonce is judged again")
    func nonceIsPartOfTheKey() throws {
        // Facebook tokens carry the SHA-256 of the raw nonce; the sample's JSON records with nonces are valid.
        let reader = LineReader(MemoryByteSource(try Sample.bytes(Sample.log)))
        let verifier = try Sample.verifier()
        var pair: (String, String, Double)?
        while let line = reader.next(), pair == nil {
            if let r = RecordExtractor().extract(line), let token = r.token, let nonce = r.nonce, let at = r.at,
               verifier.evaluate(token, at: at, nonce: Nonce(nonce)).isValid { pair = (token, nonce, at) }
        }
        let (token, nonce, at) = try #require(pair)
        let log = [record(token, at: at, nonce: nonce), record(token, at: at, nonce: "other"), record(token, at: at, nonce: nonce),
                   record(token, at: at)].joined(separator: "\n")
        let run = try AuditRun(Array(log.utf8), verifier: verifier, threads: 1)
        #expect(run.results.map { $0.error?.code } == [nil, .nonceMismatch, nil, nil])
    }

    @Test("replays are found in input order whatever the threads, and refused tokens take no slot", arguments: [1, 4])
    func replayOrder(threads: Int) throws {
        let tokens = try Sample.validTokens()
        let (firebase, fc) = try #require(tokens["firebase"])
        let (apple, ac) = try #require(tokens["apple"])
        let fAt = Double(try #require(fc["iat"] as? Int)) + 5
        let aAt = Double(try #require(ac["iat"] as? Int)) + 5
        let log = [
            record(firebase, at: fAt + 10_000),   // expired: refused, takes no slot
            record(firebase, at: fAt),            // first acceptance
            record(apple, at: aAt),
            record(firebase, at: fAt + 1),        // replay of line 2
            "",
            record(apple, at: aAt + 2),           // replay of line 3
        ].joined(separator: "\n")
        let run = try AuditRun(Array(log.utf8), verifier: try Sample.verifier(), threads: threads, replay: MemoryReplayDetector(), batchLines: 1)
        #expect(run.results.map { $0.error?.code } == [.expired, nil, nil, .replayed, .replayed])
        #expect(run.results.map(\.firstSeenLine) == [nil, nil, nil, 2, 3])
        #expect(run.results.map(\.line) == [1, 2, 3, 4, 6])
        #expect(run.summary.replays == 2)
        #expect(run.summary.replayExamples.map(\.firstLine) == [2, 3])
    }
}
