@testable import IDTokenAudit
import Testing

@Suite("Verdict cache admission")
struct VerdictCacheTests {
    static let verdict = VerdictCache.Verdict(error: nil, claims: .none, signatureVerified: true, profile: nil, replayEntry: nil)

    /// Looks `token` up and, on a miss, inserts its verdict, as the audit does; returns whether it was a hit.
    static func present(_ token: String, to cache: VerdictCache) -> Bool {
        let key = VerdictCache.Key(token: token, nonce: nil, key: cache.hashKey)
        if cache.lookup(key, at: 0) != nil { return true }
        cache.insert(key, VerdictCache.Entry(from: -.infinity, until: .infinity, verdict: verdict))
        return false
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
}
