@testable import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Verdict cache")
struct VerdictCacheTests {
    static let verdict = VerdictCache.Verdict(error: nil, claims: .none, signatureVerified: true, profile: nil, replayEntry: nil)

    /// Looks `token` up and, on a miss, inserts its verdict, as the audit does; returns whether it was a hit.
    static func present(_ token: String, to cache: VerdictCache, verdict: VerdictCache.Verdict = verdict) -> Bool {
        lookup(token, in: cache) != nil || { insert(token, verdict, in: cache); return false }()
    }

    static func lookup(_ token: String, in cache: VerdictCache) -> VerdictCache.Verdict? {
        cache.lookup(VerdictCache.Probe(token: token, nonce: nil), at: 0) { VerdictCache.Key(token: token, nonce: nil, key: cache.hashKey) }
    }

    static func insert(_ token: String, _ verdict: VerdictCache.Verdict, in cache: VerdictCache) {
        cache.insert(VerdictCache.Probe(token: token, nonce: nil), key: { VerdictCache.Key(token: token, nonce: nil, key: cache.hashKey) },
                     entry: { VerdictCache.Entry(from: -.infinity, until: .infinity, verdict: verdict) })
    }

    @Test("a repeated token is verified once: its next appearance is a hit, however many distinct tokens came before")
    func repeatAfterDistinctTokens() {
        let cache = VerdictCache(capacity: 32, shards: 1)
        for k in 0..<200 { #expect(!VerdictCacheTests.present("distinct-\(k)", to: cache)) }
        #expect(!VerdictCacheTests.present("repeated", to: cache))
        #expect(VerdictCacheTests.present("repeated", to: cache))
        // Two generations are kept: a token is still held after a generation's worth of other tokens.
        for k in 200..<232 { _ = VerdictCacheTests.present("distinct-\(k)", to: cache) }
        #expect(VerdictCacheTests.present("repeated", to: cache))
    }

    @Test("tokens that share a probe (the same last bytes and length) keep their own verdicts")
    func sharedProbe() {
        let cache = VerdictCache(capacity: 64, shards: 4)
        let first = "eyJhIjoxfQ.eyJiIjoxfQ.SAME-TAIL-0123456789"
        let second = "eyJhIjoyfQ.eyJiIjoyfQ.SAME-TAIL-0123456789"
        #expect(VerdictCache.Probe(token: first, nonce: nil).value == VerdictCache.Probe(token: second, nonce: nil).value)
        let refused = VerdictCache.Verdict(error: TokenError(.badSignature, "forged"), claims: .none, signatureVerified: false,
                                           profile: nil, replayEntry: nil)
        VerdictCacheTests.insert(first, VerdictCacheTests.verdict, in: cache)
        #expect(VerdictCacheTests.lookup(second, in: cache) == nil)
        VerdictCacheTests.insert(second, refused, in: cache)
        #expect(VerdictCacheTests.lookup(first, in: cache)?.error == nil)
        #expect(VerdictCacheTests.lookup(first, in: cache) != nil)
        #expect(VerdictCacheTests.lookup(second, in: cache)?.error?.code == .badSignature)
        // A nonce makes another probe, and another key.
        #expect(VerdictCache.Probe(token: first, nonce: "n").value != VerdictCache.Probe(token: first, nonce: nil).value)
        #expect(cache.lookup(VerdictCache.Probe(token: first, nonce: "n"), at: 0) { VerdictCache.Key(token: first, nonce: "n", key: cache.hashKey) } == nil)
    }
}
