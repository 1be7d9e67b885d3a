import Foundation
import IDTokenKit

/// Remembers verdicts so that a token that appears many times in a log is verified once.
///
/// A verdict depends on the time of judgement only through the token's `exp`, `nbf`, `iat` and `auth_time`
/// (each shifted by the leeway; see ``Judgement/timeThresholds``). Each entry therefore holds the interval of
/// times between the thresholds around the time it was judged at, and answers only for times inside it: the
/// same token judged before and after its expiry gets two verdicts, each computed once. Entries are keyed by the
/// token's exact bytes and the record's nonce.
///
/// Memory is bounded: each of the shards keeps two generations of at most `capacity / shards` tokens and drops
/// the older generation when the newer fills. Each shard has its own lock, held for a dictionary lookup.
final class VerdictCache: @unchecked Sendable {
    struct Key: Hashable {
        let token: String
        let nonce: String?

        // Hash and compare bytes: String equality is Unicode-canonical, and two different byte strings
        // must never share a verdict.
        func hash(into hasher: inout Hasher) {
            var token = token
            token.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(nonce)
        }

        static func == (a: Key, b: Key) -> Bool {
            a.token.utf8.elementsEqual(b.token.utf8)
                && (a.nonce == nil) == (b.nonce == nil)
                && (a.nonce ?? "").utf8.elementsEqual((b.nonce ?? "").utf8)
        }
    }

    /// A verdict and the interval of times `[from, until)` for which it holds.
    struct Entry: Sendable {
        let from: Double
        let until: Double
        let verdict: Verdict
    }

    /// What is reused: everything an ``AuditResult`` needs besides the record's own line, id and time.
    struct Verdict: Sendable {
        let error: TokenError?
        let claims: ReportedClaims
        let signatureVerified: Bool
        let profile: String?
        let replayEntry: ReplayEntry?
    }

    private final class Shard {
        let lock = NSLock()
        var current: [Key: [Entry]] = [:]
        var previous: [Key: [Entry]] = [:]
    }

    private let shards: [Shard]
    private let perShard: Int

    /// - Parameter capacity: tokens kept per generation, over all shards; 0 disables the cache.
    init(capacity: Int, shards: Int = 16) {
        let count = max(1, shards)
        self.shards = (0..<count).map { _ in Shard() }
        self.perShard = capacity / count
    }

    var isEnabled: Bool { perShard > 0 }

    private func shard(_ key: Key) -> Shard {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    func lookup(_ key: Key, at: Double) -> Verdict? {
        guard isEnabled else { return nil }
        let shard = shard(key)
        shard.lock.lock()
        defer { shard.lock.unlock() }
        let entries = shard.current[key] ?? shard.previous[key]
        return entries?.first(where: { $0.from <= at && at < $0.until })?.verdict
    }

    func insert(_ key: Key, _ entry: Entry) {
        guard isEnabled else { return }
        let shard = shard(key)
        shard.lock.lock()
        defer { shard.lock.unlock() }
        if var entries = shard.current[key] {
            if entries.count < 8 { entries.append(entry) }
            shard.current[key] = entries
            return
        }
        if shard.current.count >= perShard {
            shard.previous = shard.current
            shard.current = [:]
            shard.current.reserveCapacity(perShard)
        }
        shard.current[key] = (shard.previous[key] ?? []).suffix(7) + [entry]
    }

    /// The interval `[from, until)` around `at` that no threshold splits.
    static func interval(around at: Double, thresholds: [Double]) -> (from: Double, until: Double) {
        var from = -Double.infinity, until = Double.infinity
        for t in thresholds {
            if t <= at { from = max(from, t) } else { until = min(until, t) }
        }
        return (from, until)
    }
}
