@testable import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Verdict cache admission")
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

    @Test("distinct tokens: every token is remembered until a generation passes without a hit, then one in 16")
    func sampling() {
        let cache = VerdictCache(capacity: 32, shards: 1)
        for k in 0..<32 { #expect(!VerdictCacheTests.present("distinct-\(k)", to: cache)) }
        // While admitting every token, the last one is still held.
        #expect(VerdictCacheTests.present("distinct-31", to: cache))
        for k in 32..<100 { #expect(!VerdictCacheTests.present("distinct-\(k)", to: cache)) }
        for k in 100..<132 { _ = VerdictCacheTests.present("distinct-\(k)", to: cache) }
        let held = (100..<132).filter { VerdictCacheTests.present("distinct-\($0)", to: cache) }.count
        // 32 misses in a row after the hit above: the shard admits every token, then one in 16.
        #expect(held >= 1 && held <= 8)
    }

    @Test("a repeated token is remembered within a few appearances, and a hit admits every token again")
    func repeatsComeBack() {
        let cache = VerdictCache(capacity: 32, shards: 1)
        for k in 0..<200 { _ = VerdictCacheTests.present("distinct-\(k)", to: cache) }
        var appearances = 0
        while !VerdictCacheTests.present("repeated", to: cache) {
            appearances += 1
            if appearances > VerdictCache.samplingRate + 1 { break }
        }
        #expect(appearances >= 1 && appearances <= VerdictCache.samplingRate)
        // After the hit, new tokens are taken again.
        #expect(!VerdictCacheTests.present("fresh", to: cache))
        #expect(VerdictCacheTests.present("fresh", to: cache))
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
