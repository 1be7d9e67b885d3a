import Foundation
import IDTokenKit
import Synchronization
import TestSupport
import Testing

/// Shared state under contention, through the verifier: the replay cache (each token accepted exactly once,
/// however many threads present it at once) and the verified-token cache (the same verdicts as a verifier
/// without one, while threads fill and evict it). Run under ThreadSanitizer by scripts/sanitize.
@Suite struct ConcurrencyTests {
    /// Facebook tokens, each with its own jti, all valid at the fixtures' time.
    static let tokens: [String] = (0..<48).map { n in
        Fixtures.token(.facebook, claims: Fixtures.claims(.facebook).with("jti", Fixtures.quoted("jti-\(n)")))
    }

    @Test func eachTokenIsAcceptedOnceByEightThreadsPresentingItTogether() {
        let verifier = try! IDTokenVerifier(profile: Fixtures.profile(.facebook), keys: Fixtures.keys,
                                            replayCache: MemoryReplayCache(capacity: 4096, shardCount: 4))
        let tokens = Self.tokens
        let accepted = Mutex([Int](repeating: 0, count: tokens.count))
        let others = Mutex([String]())
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var order = Array(tokens.indices)
            var rng = SplitMix64(seed: UInt64(thread) &+ 0x7265_706C_6179)
            order.shuffle(using: &rng)
            // Every token twice per thread: once in this order, once more at the end.
            for k in order + order.reversed() {
                do throws(TokenError) {
                    _ = try verifier.verify(tokens[k], keys: Fixtures.keys, now: Fixtures.nowDate)
                    accepted.withCriticalSection { $0[k] += 1 }
                } catch where error.code == .replayed {
                } catch {
                    others.withCriticalSection { $0.append(error.code.rawValue) }
                }
            }
        }
        #expect(accepted.withCriticalSection { $0 } == [Int](repeating: 1, count: tokens.count))
        #expect(others.withCriticalSection { $0 }.isEmpty)
    }

    @Test func eachTokenIsAcceptedOnceByAThousandTasks() async {
        let verifier = try! IDTokenVerifier(profile: Fixtures.profile(.facebook), keys: Fixtures.keys,
                                            replayCache: MemoryReplayCache(capacity: 4096))
        let tokens = Self.tokens
        let outcomes = await withTaskGroup(of: (Int, Outcome).self) { group in
            for n in 0..<1000 {
                let k = n % tokens.count
                group.addTask {
                    do throws(TokenError) {
                        _ = try await verifier.verify(tokens[k], now: Fixtures.nowDate)
                        return (k, .accepted)
                    } catch {
                        return (k, .rejected(error.code))
                    }
                }
            }
            return await group.reduce(into: [(Int, Outcome)]()) { $0.append($1) }
        }
        for k in tokens.indices {
            let mine = outcomes.filter { $0.0 == k }.map(\.1)
            #expect(mine.filter { $0 == .accepted }.count == 1, "token \(k): \(mine)")
            #expect(mine.allSatisfy { $0 == .accepted || $0 == .rejected(.replayed) }, "token \(k): \(mine)")
        }
    }

    /// A verified-token cache smaller than the set of tokens, so that threads keep inserting and evicting, must
    /// answer exactly as a verifier without a cache, for valid tokens and every kind of rejection, at two times.
    @Test func aContendedVerifiedTokenCacheAnswersLikeNoCache() {
        let profile = Fixtures.profile(.firebase)
        let plain = try! IDTokenVerifier(profile: profile, keys: Fixtures.keys)
        let cached = try! IDTokenVerifier(profile: profile, keys: Fixtures.keys, cache: .init(capacity: 32))
        var tokens = (0..<64).map { n in Fixtures.token(.firebase, claims: Fixtures.claims(.firebase, subject: "user-\(n)")) }
        tokens += AttackCatalogueTests.cases.filter { $0.provider == .firebase && $0.keys.keys.count == 2 }.map(\.token)
        let times = [Fixtures.nowDate, Fixtures.nowDate.addingTimeInterval(3700)]   // the second is after exp
        let expected = times.map { at in tokens.map { Outcome.of(plain, $0, keys: Fixtures.keys, now: at) } }
        #expect(expected[0].filter { $0 == .accepted }.count >= 64)
        #expect(expected[1].allSatisfy { $0 != .accepted })

        let differing = Mutex([String]())
        let all = tokens
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var rng = SplitMix64(seed: UInt64(thread) &+ 0x6361_6368_65)
            for _ in 0..<(all.count * 6) {
                let k = rng.below(all.count)
                let t = rng.below(times.count)
                let outcome = Outcome.of(cached, all[k], keys: Fixtures.keys, now: times[t])
                if outcome != expected[t][k] {
                    differing.withCriticalSection { $0.append("token \(k) at time \(t): \(outcome), expected \(expected[t][k])") }
                }
            }
        }
        #expect(differing.withCriticalSection { $0 }.isEmpty, "\(differing.withCriticalSection { $0.prefix(5) })")
    }
}
