@testable import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Verdict cache")
struct VerdictCacheTests {
    static let verdict = VerdictCache.Verdict(error: nil, claims: .none, signatureVerified: true, profile: nil, replayEntry: nil)
    static let refused = VerdictCache.Verdict(error: TokenError(.badSignature, "forged"), claims: .none, signatureVerified: false,
                                              profile: nil, replayEntry: nil)

    /// Looks `token` up and, on a miss, inserts its verdict, as the audit does (a claim, then the insert that ends
    /// it, told whether the cache held the token); returns whether it was a hit.
    static func present(_ token: String, to cache: VerdictCache, verdict: VerdictCache.Verdict = verdict) -> Bool {
        let hash = cache.hash(token: token.utf8, nonce: nil)
        switch cache.lookupOrClaim(hash, token: token.utf8, nonce: nil, at: 0) {
        case .hit: return true
        case .busy:
            Issue.record("no other worker holds a claim")
            return false
        case .judge(let claimed, let fresh):
            cache.insert(hash, token: token.utf8, nonce: nil, entry: VerdictCache.Entry(from: -.infinity, until: .infinity, verdict: verdict),
                         releasing: claimed, fresh: fresh)
            return false
        }
    }

    static func lookup(_ token: String, nonce: String? = nil, in cache: VerdictCache, hash: UInt64? = nil) -> VerdictCache.Verdict? {
        cache.lookup(hash ?? cache.hash(token: token.utf8, nonce: nonce), token: token.utf8, nonce: nonce, at: 0)
    }

    static func insert(_ token: String, nonce: String? = nil, _ verdict: VerdictCache.Verdict, in cache: VerdictCache,
                       hash: UInt64? = nil) {
        cache.insert(hash ?? cache.hash(token: token.utf8, nonce: nonce), token: token.utf8, nonce: nonce,
                     entry: VerdictCache.Entry(from: -.infinity, until: .infinity, verdict: verdict))
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

    @Test("a generation holds its full capacity: the table grows without losing tokens")
    func growth() {
        let cache = VerdictCache(capacity: 3000, shards: 2)
        for k in 0..<2900 { #expect(!VerdictCacheTests.present("token-\(k)", to: cache)) }
        var hits = 0
        for k in 0..<2900 where VerdictCacheTests.present("token-\(k)", to: cache) { hits += 1 }
        #expect(hits == 2900)
    }

    @Test("many small shards (sixteen an audit worker) keep every token their generations hold, in pages sized to them")
    func manySmallShards() {
        // The default capacity over 256 shards, as 16 workers spread it: 32 tokens a generation, 64 KiB of text,
        // 8 KiB pages; sixteen shards keep 32 KiB pages.
        let cache = VerdictCache(capacity: 8192, shards: 256)
        #expect(cache.pageBytes == 8192)
        #expect(VerdictCache(capacity: 8192).pageBytes == 32768)
        func token(_ k: Int) -> String { "token-\(k)-" + String(repeating: "x", count: 900 + k % 200) }
        // About twelve tokens a shard: no shard fills two generations, so every one is held.
        for k in 0..<3000 { #expect(!VerdictCacheTests.present(token(k), to: cache)) }
        var hits = 0
        for k in 0..<3000 where VerdictCacheTests.present(token(k), to: cache) { hits += 1 }
        #expect(hits == 3000)
        // Far more than the cache holds: what is left is at most two generations of every shard.
        for k in 3000..<40000 { _ = VerdictCacheTests.present(token(k), to: cache) }
        hits = 0
        for k in 0..<40000 where VerdictCacheTests.lookup(token(k), in: cache) != nil { hits += 1 }
        #expect(hits >= 8192 && hits <= 2 * 8192)
    }

    @Test("large tokens fill a generation by their bytes; a token over a generation's byte budget is not remembered")
    func byteBudget() {
        // 32 tokens a generation, so 64 KiB of text a generation.
        let cache = VerdictCache(capacity: 32, shards: 1)
        func token(_ k: Int, bytes: Int) -> String { "t\(k)-" + String(repeating: "x", count: bytes) }
        #expect(!VerdictCacheTests.present(token(0, bytes: 10_000), to: cache))
        #expect(VerdictCacheTests.present(token(0, bytes: 10_000), to: cache))
        // Seven more fill the first generation by bytes; the first token is still held, in the older generation.
        for k in 1...7 { #expect(!VerdictCacheTests.present(token(k, bytes: 10_000), to: cache)) }
        #expect(VerdictCacheTests.present(token(0, bytes: 10_000), to: cache))
        // Two generations' worth later, it is gone: at most two generations of text are kept.
        for k in 8...24 { _ = VerdictCacheTests.present(token(k, bytes: 10_000), to: cache) }
        #expect(!VerdictCacheTests.present(token(0, bytes: 10_000), to: cache))
        let huge = token(99, bytes: 70_000)
        #expect(!VerdictCacheTests.present(huge, to: cache))
        #expect(!VerdictCacheTests.present(huge, to: cache))
    }

    @Test("a claim says whether either generation holds the token: a fresh one is added, a held one keeps its verdicts")
    func freshClaims() {
        let cache = VerdictCache(capacity: 64, shards: 1)
        let token = "eyJhIjoxfQ.eyJiIjoxfQ.c2lnbmF0dXJl"
        let hash = cache.hash(token: token.utf8, nonce: nil)
        func claim(at time: Double) -> (claimed: Bool, fresh: Bool)? {
            guard case .judge(let claimed, let fresh) = cache.lookupOrClaim(hash, token: token.utf8, nonce: nil, at: time) else { return nil }
            return (claimed, fresh)
        }
        func insert(_ from: Double, _ until: Double, _ verdict: VerdictCache.Verdict, fresh: Bool) {
            cache.insert(hash, token: token.utf8, nonce: nil, entry: VerdictCache.Entry(from: from, until: until, verdict: verdict),
                         releasing: true, fresh: fresh)
        }
        func lookup(at time: Double) -> VerdictCache.Verdict? { cache.lookup(hash, token: token.utf8, nonce: nil, at: time) }

        let first = claim(at: 10)
        #expect(first?.claimed == true && first?.fresh == true)
        insert(0, 100, VerdictCacheTests.verdict, fresh: true)
        #expect(lookup(at: 10) === VerdictCacheTests.verdict)
        // The same token judged for a time after its interval: held, so its insert looks for it and keeps the verdict
        // before.
        let second = claim(at: 150)
        #expect(second?.claimed == true && second?.fresh == false)
        insert(100, 200, VerdictCacheTests.refused, fresh: false)
        #expect(lookup(at: 10) === VerdictCacheTests.verdict)
        #expect(lookup(at: 150) === VerdictCacheTests.refused)
        // A generation's worth of other tokens moves it to the previous generation: still held, not fresh, and its
        // latest verdict carried into the new slot.
        for k in 0..<64 { #expect(!VerdictCacheTests.present("other-\(k)", to: cache)) }
        let third = claim(at: 250)
        #expect(third?.claimed == true && third?.fresh == false)
        insert(200, 300, VerdictCacheTests.verdict, fresh: false)
        #expect(lookup(at: 150) === VerdictCacheTests.refused)
        #expect(lookup(at: 250) === VerdictCacheTests.verdict)
        // Another token of the same hash is not this one: its claim is fresh, and both keep their own verdicts.
        let other = "eyJhIjoyfQ.eyJiIjoyfQ.c2lnbmF0dXJl"
        guard case .judge(true, true) = cache.lookupOrClaim(hash, token: other.utf8, nonce: nil, at: 250) else {
            Issue.record("a different token of the same hash was taken for the held one")
            return
        }
        cache.insert(hash, token: other.utf8, nonce: nil, entry: VerdictCache.Entry(from: 0, until: 1000, verdict: VerdictCacheTests.refused),
                     releasing: true, fresh: true)
        #expect(lookup(at: 250) === VerdictCacheTests.verdict)
        #expect(cache.lookup(hash, token: other.utf8, nonce: nil, at: 250) === VerdictCacheTests.refused)
    }

    @Test("tokens that share a hash keep their own verdicts: a hit is always the same token and nonce")
    func sharedHash() {
        let cache = VerdictCache(capacity: 64, shards: 4)
        let first = "eyJhIjoxfQ.eyJiIjoxfQ.SAME-TAIL-0123456789"
        let second = "eyJhIjoyfQ.eyJiIjoyfQ.SAME-TAIL-0123456789"
        let hash: UInt64 = 0x1234_5678_9ABC_DEF0
        VerdictCacheTests.insert(first, VerdictCacheTests.verdict, in: cache, hash: hash)
        #expect(VerdictCacheTests.lookup(second, in: cache, hash: hash) == nil)
        #expect(VerdictCacheTests.lookup(first, nonce: "n", in: cache, hash: hash) == nil)
        #expect(VerdictCacheTests.lookup(first, nonce: "", in: cache, hash: hash) == nil)
        VerdictCacheTests.insert(second, VerdictCacheTests.refused, in: cache, hash: hash)
        VerdictCacheTests.insert(first, nonce: "n", VerdictCacheTests.refused, in: cache, hash: hash)
        #expect(VerdictCacheTests.lookup(first, in: cache, hash: hash) != nil)
        #expect(VerdictCacheTests.lookup(first, in: cache, hash: hash)?.error == nil)
        #expect(VerdictCacheTests.lookup(second, in: cache, hash: hash)?.error?.code == .badSignature)
        #expect(VerdictCacheTests.lookup(first, nonce: "n", in: cache, hash: hash)?.error?.code == .badSignature)
    }

    @Test("the hash reads every byte of the token and the nonce, and depends on the cache's seeds")
    func hashCoversEveryByte() {
        let cache = VerdictCache(capacity: 64)
        for length in 0..<70 {
            let token = String(repeating: "a", count: length)
            let base = cache.hash(token: token.utf8, nonce: nil)
            #expect(cache.hash(token: token.utf8, nonce: nil) == base)
            #expect(cache.hash(token: (token + "a").utf8, nonce: nil) != base, "length \(length)")
            for position in 0..<length {
                var bytes = Array(token.utf8)
                bytes[position] = UInt8(ascii: "b")
                #expect(cache.hash(token: bytes, nonce: nil) != base,
                        "length \(length), byte \(position)")
            }
            #expect(cache.hash(token: token.utf8, nonce: "") != base)
            #expect(cache.hash(token: token.utf8, nonce: "n") != cache.hash(token: token.utf8, nonce: "m"))
        }
        let other = VerdictCache(capacity: 64)
        #expect(other.hash(token: "eyJa.eyJb.c".utf8, nonce: nil) != cache.hash(token: "eyJa.eyJb.c".utf8, nonce: nil))
    }
}
