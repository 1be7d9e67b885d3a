import Foundation
import TestSupport
import Testing
@testable import IDTokenKit

/// A token's replay entry as the verifier builds it: the SHA-256 of a (here synthetic) signature segment.
func entry(_ token: Int, issuer: String = "https://securetoken.google.com/demo", expiresAt: Int64 = 2_000_000_000) -> ReplayEntry {
    ReplayEntry(issuer: issuer, tokenDigest: SHA256.hash(Array("signature-\(token)".utf8)), expiresAt: expiresAt)
}

@Suite struct MemoryReplayCacheTests {
    let now: Int64 = 1_700_000_000

    @Test func acceptsOnceThenRefusesReplays() throws {
        let cache = MemoryReplayCache(capacity: 1000)
        #expect(try cache.insertIfAbsentNow(entry(1), now: now))
        #expect(try !cache.insertIfAbsentNow(entry(1), now: now))
        #expect(try !cache.insertIfAbsentNow(entry(1), now: now + 3600))
        #expect(try cache.insertIfAbsentNow(entry(2), now: now))
        #expect(cache.count == 2)
    }

    @Test func theIssuerIsPartOfTheKey() throws {
        let cache = MemoryReplayCache(capacity: 1000)
        let digest = SHA256.hash(Array("same signature".utf8))
        let apple = ReplayEntry(issuer: "https://appleid.apple.com", tokenDigest: digest, expiresAt: now + 600)
        let facebook = ReplayEntry(issuer: "https://www.facebook.com", tokenDigest: digest, expiresAt: now + 600)
        #expect(try cache.insertIfAbsentNow(apple, now: now))
        #expect(try cache.insertIfAbsentNow(facebook, now: now))
        #expect(try !cache.insertIfAbsentNow(apple, now: now))
        #expect(try !cache.insertIfAbsentNow(facebook, now: now))
        #expect(MemoryReplayKey(apple) != MemoryReplayKey(facebook))
        #expect(MemoryReplayKey.issuerTag("https://appleid.apple.com") != MemoryReplayKey.issuerTag("https://appleid.apple.co"))
        #expect(MemoryReplayKey.issuerTag("") != MemoryReplayKey.issuerTag("\0"))
    }

    @Test func digestsOfOtherLengthsAreHashedNotTruncated() throws {
        let cache = MemoryReplayCache(capacity: 100)
        let long = ReplayEntry(issuer: "i", tokenDigest: Array(repeating: 7, count: 32) + [1], expiresAt: now + 60)
        let prefix = ReplayEntry(issuer: "i", tokenDigest: Array(repeating: 7, count: 32), expiresAt: now + 60)
        let short = ReplayEntry(issuer: "i", tokenDigest: [1, 2, 3], expiresAt: now + 60)
        #expect(try cache.insertIfAbsentNow(long, now: now))
        #expect(try cache.insertIfAbsentNow(prefix, now: now))
        #expect(try cache.insertIfAbsentNow(short, now: now))
        #expect(try !cache.insertIfAbsentNow(short, now: now))
        #expect(try !cache.insertIfAbsentNow(long, now: now))
    }

    @Test func anExpiredEntryIsNotStoredAndAnEntryIsForgottenAtItsExpiry() throws {
        let cache = MemoryReplayCache(capacity: 100)
        let stale = entry(1, expiresAt: now)
        #expect(try cache.insertIfAbsentNow(stale, now: now))
        #expect(try cache.insertIfAbsentNow(stale, now: now))
        #expect(cache.count == 0)

        let live = entry(2, expiresAt: now + 10)
        #expect(try cache.insertIfAbsentNow(live, now: now))
        #expect(try !cache.insertIfAbsentNow(live, now: now + 9))
        // At `exp + leeway` the verifier itself rejects the token as expired; the entry is dead.
        let renewed = entry(2, expiresAt: now + 20)
        #expect(try cache.insertIfAbsentNow(renewed, now: now + 10))
        #expect(try !cache.insertIfAbsentNow(renewed, now: now + 10))
    }

    /// DESIGN §6: two threads presenting the same token at once — exactly one wins. Eight threads each try all
    /// 1,000 tokens ten times, in different orders, starting together.
    @Test func exactlyOnceUnderConcurrency() throws {
        let cache = MemoryReplayCache(capacity: 10_000)
        let tokens = (0..<1000).map { entry($0, expiresAt: now + 3600) }
        let perThread = raceOnThreads(8) { thread -> [Int] in
            var accepted = [Int](repeating: 0, count: tokens.count)
            for attempt in 0..<10_000 {
                let token = (attempt &* 7919 &+ thread &* 131) % tokens.count
                if (try? cache.insertIfAbsentNow(tokens[token], now: now)) == true { accepted[token] += 1 }
            }
            return accepted
        }
        let acceptedPerToken = (0..<tokens.count).map { token in perThread.reduce(0) { $0 + $1[token] } }
        #expect(acceptedPerToken.reduce(0, +) == 1000)
        #expect(acceptedPerToken.allSatisfy { $0 == 1 })
        #expect(cache.count == 1000)
    }

    @Test func aFullCacheRefusesNewTokensButStillRecognisesReplays() throws {
        let cache = MemoryReplayCache(capacity: 100, shardCount: 1)
        for token in 0..<100 { #expect(try cache.insertIfAbsentNow(entry(token, expiresAt: now + 60 + Int64(token)), now: now)) }
        let refusal = #expect(throws: TokenError.self) { try cache.insertIfAbsentNow(entry(100), now: now) }
        #expect(refusal?.code == .replayStoreUnavailable, "a full store is its failure, never the token's replay")
        #expect(refusal?.message.contains("full") == true)
        #expect(refusal?.message.contains("capacity 100") == true)
        // A token already recorded is still a replay, not a capacity error.
        #expect(try !cache.insertIfAbsentNow(entry(5), now: now))
        #expect(cache.count == 100)

        // Tokens 0..<10 expire at now+60...now+69: at now+69 ten slots are free (the entry is dead at its
        // expiry), and only ten.
        let later = now + 69
        for token in 200..<210 { #expect(try cache.insertIfAbsentNow(entry(token, expiresAt: later + 600), now: later)) }
        #expect(throws: TokenError.self) { try cache.insertIfAbsentNow(entry(210), now: later) }
        #expect(try !cache.insertIfAbsentNow(entry(50, expiresAt: now + 110), now: later))
        #expect(cache.count == 100)
    }

    @Test func aShardedFullCacheHoldsExactlyItsCapacityAndRefillsAfterExpiry() throws {
        let cache = MemoryReplayCache(capacity: 1024, shardCount: 64)
        #expect(cache.shardCount == 64)
        var accepted = 0, refused = 0
        for token in 0..<8192 {
            do {
                if try cache.insertIfAbsentNow(entry(token, expiresAt: now + 100), now: now) { accepted += 1 }
            } catch {
                #expect(error.code == .replayStoreUnavailable)
                refused += 1
            }
        }
        // 8192 uniformly spread tokens fill every one of the 64 shards' 16 slots.
        #expect(accepted == 1024)
        #expect(refused == 8192 - 1024)
        #expect(cache.count == 1024)

        var acceptedLater = 0
        for token in 10_000..<18_192 where (try? cache.insertIfAbsentNow(entry(token, expiresAt: now + 300), now: now + 100)) == true {
            acceptedLater += 1
        }
        #expect(acceptedLater == 1024)
        #expect(cache.count == 1024)
    }

    @Test func expiredEntriesAreReclaimedAsTimeMovesOn() throws {
        // 100 new tokens a second, each living 5 s: never more than 500 live, in a cache of 1,000.
        let cache = MemoryReplayCache(capacity: 1000)
        var token = 0
        for second in 0..<200 {
            for _ in 0..<100 {
                #expect(try cache.insertIfAbsentNow(entry(token, expiresAt: now + Int64(second) + 5), now: now + Int64(second)))
                token += 1
            }
            #expect(cache.count <= 1000)
        }
    }

    @Test func theCursorReclaimsExpiredEntriesBeforeTheCacheFills() throws {
        let cache = MemoryReplayCache(capacity: 4096, shardCount: 1)
        // 2,100 live entries take the table to its largest size (8,192 slots), so it will not grow again.
        for token in 0..<2100 { #expect(try cache.insertIfAbsentNow(entry(token, expiresAt: now + 1000), now: now)) }
        for token in 2100..<3100 { #expect(try cache.insertIfAbsentNow(entry(token, expiresAt: now + 10), now: now)) }
        #expect(cache.count == 3100)
        // 900 more at now+20: the cache never fills (3,100 + 900 < 4,096), so only the per-insertion cursor and
        // probes that reuse a dead slot can remove any of the 1,000 expired entries.
        for token in 3100..<4000 { #expect(try cache.insertIfAbsentNow(entry(token, expiresAt: now + 1000), now: now + 20)) }
        #expect(cache.count < 3900)
        #expect(cache.count >= 3000)
    }

    /// The table against a plain dictionary model, with keys crafted to share home slots so that clusters
    /// form, wrap around the table's end and are cut by backward-shift deletions.
    @Test func behavesLikeAModelUnderRandomOperations() throws {
        var random = SplitMix64(seed: 0x5EED_0005)
        let limit = 40
        let cache = MemoryReplayCache(capacity: limit, shardCount: 1)
        let issuer = "https://issuer.example"
        let tag = MemoryReplayKey.issuerTag(issuer)
        let pool: [[UInt8]] = (0..<160).map { index in
            // Homes among 8 neighbouring slots near the end of the 128-slot table.
            let w0 = (UInt64(118 + index % 8) | UInt64(index) << 7) ^ tag
            var digest = withUnsafeBytes(of: w0.littleEndian) { Array($0) }
            digest += (0..<24).map { _ in UInt8.random(in: 0...255, using: &random) }
            return digest
        }
        var model: [Int: Int64] = [:]
        var clock: Int64 = 1000
        for step in 0..<20_000 {
            if random.next() % 8 == 0 { clock += Int64(random.next() % 4) }
            let pick = Int(random.next() % UInt64(pool.count))
            let expiresAt = clock + Int64(random.next() % 30) - 2
            let candidate = ReplayEntry(issuer: issuer, tokenDigest: pool[pick], expiresAt: expiresAt)
            let expected: Bool?
            if expiresAt <= clock {
                expected = true
            } else if let known = model[pick], known > clock {
                expected = false
            } else if model.values.filter({ $0 > clock }).count >= limit {
                expected = nil
            } else {
                model[pick] = expiresAt
                expected = true
            }
            let actual = try? cache.insertIfAbsentNow(candidate, now: clock)
            #expect(actual == expected, "step \(step)")
            if actual != expected { break }
        }
        #expect(cache.count <= limit)
    }

    @Test func capacityAndShardCountAreClamped() {
        #expect(MemoryReplayCache(capacity: 1).shardCount == 1)
        #expect(MemoryReplayCache(capacity: 10).shardCount == 1)
        #expect(MemoryReplayCache(capacity: 10, shardCount: 64).shardCount == 8)
        #expect(MemoryReplayCache(capacity: 5000).shardCount == 4)
        #expect(MemoryReplayCache(capacity: 1_000_000).shardCount == 64)
        #expect(MemoryReplayCache(capacity: 1_000_000, shardCount: 1000).shardCount == 64)
        #expect(MemoryReplayCache(capacity: 1_000, shardCount: 12).shardCount == 8)
    }

    @Test func theAsyncProtocolAnswersLikeTheSynchronousOne() async throws {
        let cache: any ReplayCache = MemoryReplayCache(capacity: 10)
        #expect(try await cache.insertIfAbsent(entry(1), now: now))
        #expect(try await !cache.insertIfAbsent(entry(1), now: now))
    }
}

/// Reservations (DESIGN §6): a notification held while its handler runs, then committed or released.
@Suite struct MemoryReplayReservationTests {
    let now: Int64 = 1_700_000_000

    @Test func reservedThenHeldThenCommitted() async throws {
        let cache = MemoryReplayCache(capacity: 100)
        let e = entry(1, expiresAt: now + 3600)
        guard case .reserved(let mine) = try await cache.reserve(e, hold: 300, now: now) else {
            Issue.record("a free entry was not reserved")
            return
        }
        #expect(try await cache.reserve(e, hold: 300, now: now + 1) == .held)
        // An insertion (a consume-on-verify token) sees the held entry as present.
        #expect(try !cache.insertIfAbsentNow(e, now: now + 1))
        try await cache.commit(mine, now: now + 2)
        #expect(try await cache.reserve(e, hold: 300, now: now + 3) == .committed)
        // Committed for the entry's lifetime, well past the hold.
        #expect(try await cache.reserve(e, hold: 300, now: now + 3000) == .committed)
        #expect(cache.count == 1)
    }

    @Test func releasedEntriesAreFreeAgain() async throws {
        let cache = MemoryReplayCache(capacity: 100)
        let e = entry(2, expiresAt: now + 3600)
        guard case .reserved(let first) = try await cache.reserve(e, hold: 300, now: now) else {
            Issue.record("a free entry was not reserved")
            return
        }
        try await cache.release(first)
        #expect(cache.count == 0)
        guard case .reserved(let second) = try await cache.reserve(e, hold: 300, now: now + 1) else {
            Issue.record("a released entry was not free")
            return
        }
        #expect(second.owner != first.owner)
        // A late release by the first holder does not touch the second's hold.
        try await cache.release(first)
        #expect(try await cache.reserve(e, hold: 300, now: now + 2) == .held)
    }

    /// A holder that died leaves a hold that ends; the next delivery reserves, and the dead holder's late commit
    /// cannot take it back.
    @Test func aHoldEndsByItself() async throws {
        let cache = MemoryReplayCache(capacity: 100)
        let e = entry(3, expiresAt: now + 3600)
        guard case .reserved(let dead) = try await cache.reserve(e, hold: 30, now: now) else {
            Issue.record("a free entry was not reserved")
            return
        }
        #expect(try await cache.reserve(e, hold: 30, now: now + 29) == .held)
        guard case .reserved(let next) = try await cache.reserve(e, hold: 30, now: now + 30) else {
            Issue.record("the entry was not free once the hold ended")
            return
        }
        try await cache.commit(dead, now: now + 31)
        #expect(try await cache.reserve(e, hold: 30, now: now + 32) == .held)
        try await cache.commit(next, now: now + 33)
        #expect(try await cache.reserve(e, hold: 30, now: now + 34) == .committed)
    }

    /// Eight tasks reserve one entry at once: exactly one holds it.
    @Test func exactlyOneOfConcurrentDeliveriesReserves() async throws {
        let cache = MemoryReplayCache(capacity: 100)
        let e = entry(4, expiresAt: now + 3600)
        let outcomes = try await withThrowingTaskGroup(of: ReplayReservation.Outcome.self) { group in
            for _ in 0..<8 { group.addTask { try await cache.reserve(e, hold: 300, now: self.now) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { if case .reserved = $0 { true } else { false } }.count == 1)
        #expect(outcomes.filter { $0 == .held }.count == 7)
    }

    @Test func aFullCacheCannotReserve() async throws {
        let cache = MemoryReplayCache(capacity: 1, shardCount: 1)
        #expect(try cache.insertIfAbsentNow(entry(5, expiresAt: now + 3600), now: now))
        await #expect(throws: TokenError(.replayStoreUnavailable, "")) {
            _ = try await cache.reserve(entry(6, expiresAt: now + 3600), hold: 300, now: now)
        }
        #expect(cache.fullCount == 1)
    }
}
