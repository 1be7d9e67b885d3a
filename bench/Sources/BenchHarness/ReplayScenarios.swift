import Foundation
import IDTokenKit
import IDTokenKitRedis

/// Replay-cache checks: each operation is one `insertIfAbsentNow`. The baseline is the raw RSA-2048 verify, so
/// the ratio says how many replay checks fit in the time of one signature verification.
///
/// - `replay-memory-new`: every check records a token never seen before (the sign-in path).
/// - `replay-memory-seen`: every check finds a token already recorded (a replay being refused).
/// - `replay-redis-new`: like `replay-memory-new` against the Redis named by the environment variable
///   `IDTK_BENCH_REDIS` (for example `redis://127.0.0.1:6379/15`); absent when it is not set.
func replayScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    let now = fixtures.now
    let expiresAt = now + 3600
    /// Distinct entries with uniformly random digests, as real token digests are.
    @Sendable func entries(_ count: Int, seed: UInt64) -> [ReplayEntry] {
        var state = seed
        return (0..<count).map { _ in
            var digest = [UInt8](repeating: 0, count: 32)
            for k in 0..<32 {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                digest[k] = UInt8(truncatingIfNeeded: state >> 56)
            }
            return ReplayEntry(issuer: "https://securetoken.google.com/idtokenkit-bench", tokenDigest: digest, expiresAt: expiresAt)
        }
    }
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var next: UInt64 = 1
        func take() -> UInt64 { lock.lock(); defer { lock.unlock() }; next += 1; return next }
    }
    let seeds = Counter()
    var scenarios = [
        Scenario(name: "replay-memory-new", summary: "MemoryReplayCache: record a new token (1M-entry cache, refilled)",
                 baseline: "raw-rsa2048") {
            // Each thread cycles through its own fresh entries; the cache is rebuilt when they run out.
            let batch = entries(1 << 16, seed: seeds.take())
            var cache = MemoryReplayCache(capacity: 1 << 20)
            var index = 0
            return {
                if index == batch.count { cache = MemoryReplayCache(capacity: 1 << 20); index = 0 }
                defer { index += 1 }
                return (try? cache.insertIfAbsentNow(batch[index], now: now)) == true
            }
        },
        Scenario(name: "replay-memory-seen", summary: "MemoryReplayCache: refuse a token already recorded (64k working set)",
                 baseline: "raw-rsa2048") {
            let batch = entries(1 << 16, seed: seeds.take())
            let cache = MemoryReplayCache(capacity: 1 << 20)
            for entry in batch { _ = try? cache.insertIfAbsentNow(entry, now: now) }
            var index = 0
            return {
                defer { index = (index + 1) & (batch.count - 1) }
                return (try? cache.insertIfAbsentNow(batch[index], now: now)) == false
            }
        },
    ]
    if let url = ProcessInfo.processInfo.environment["IDTK_BENCH_REDIS"] {
        let cache = try RedisReplayCache(url: url)
        scenarios.append(Scenario(name: "replay-redis-new", summary: "RedisReplayCache: SET NX PXAT of a new token, \(url)",
                                  baseline: "raw-rsa2048") {
            let batch = entries(1 << 20, seed: seeds.take() &* 0x9E37_79B9)
            var index = 0
            return {
                defer { index = (index + 1) & (batch.count - 1) }
                return (try? cache.insertIfAbsentNow(batch[index], now: now)) == true
            }
        })
    }
    return scenarios
}
