import Foundation
import IDTokenKit

/// Remembers verdicts so that a token that appears many times in a log is verified once.
///
/// A verdict depends on the time of judgement only through the token's `exp`, `nbf`, `iat` and `auth_time`
/// (each shifted by the leeway; see ``Judgement/timeThresholds``). Each entry therefore holds the interval of
/// times between the thresholds around the time it was judged at, and answers only for times inside it: the
/// same token judged before and after its expiry gets two verdicts, each computed once. Entries are keyed by a
/// keyed 128-bit hash of the token's exact bytes and the record's nonce (``Key``).
///
/// Memory is bounded: each of the shards keeps two generations of at most `capacity / shards` tokens and drops
/// the older generation when the newer fills. Each shard has its own lock, held for a dictionary lookup.
final class VerdictCache: @unchecked Sendable {
    /// A 128-bit keyed hash (SipHash, two passes under different salts) of the token's exact bytes and the
    /// record's nonce. The salts are random per cache, so nobody writing a log can aim two tokens at one key:
    /// two different records share a key only by chance, about 2⁻¹²⁸ for a pair. The SHA-256 this replaced
    /// cost more than a tenth of an RSA verification per record, paid by every record of a log of distinct tokens.
    struct Key: Hashable, Sendable {
        let a: UInt64, b: UInt64

        init(token: String, nonce: String?, salts: (Int, Int)) {
            a = Key.hash(token, nonce, salt: salts.0)
            b = Key.hash(token, nonce, salt: salts.1)
        }

        private static func hash(_ token: String, _ nonce: String?, salt: Int) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(salt)
            combine(token, into: &hasher)
            if let nonce {
                hasher.combine(1 as UInt8)
                combine(nonce, into: &hasher)
            } else {
                hasher.combine(0 as UInt8)
            }
            return UInt64(bitPattern: Int64(hasher.finalize()))
        }

        /// The string's UTF-8 bytes and their count (so that token and nonce cannot trade bytes).
        private static func combine(_ text: String, into hasher: inout Hasher) {
            hasher.combine(text.utf8.count)
            if text.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
                var copy = text
                copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            }
        }

        func hash(into hasher: inout Hasher) { hasher.combine(a) }
    }

    /// A verdict and the interval of times `[from, until)` for which it holds.
    struct Entry: Sendable {
        let from: Double
        let until: Double
        let verdict: Verdict
    }

    /// What is reused: everything an ``AuditResult`` needs besides the record's own line, id and time. A class,
    /// so that an entry is a pointer: cheap to move inside the dictionary, and one allocation per verdict.
    final class Verdict: Sendable {
        let error: TokenError?
        let claims: ReportedClaims
        let signatureVerified: Bool
        let profile: String?
        let replayEntry: ReplayEntry?

        init(error: TokenError?, claims: ReportedClaims, signatureVerified: Bool, profile: String?, replayEntry: ReplayEntry?) {
            self.error = error
            self.claims = claims
            self.signatureVerified = signatureVerified
            self.profile = profile
            self.replayEntry = replayEntry
        }
    }

    /// A token's last two verdicts, inline (no allocation per token).
    struct Pair: Sendable {
        var latest: Entry
        var earlier: Entry?

        func verdict(at time: Double) -> Verdict? {
            if latest.from <= time && time < latest.until { return latest.verdict }
            if let earlier, earlier.from <= time && time < earlier.until { return earlier.verdict }
            return nil
        }
    }

    private final class Shard {
        let lock = NSLock()
        var current: [Key: Pair] = [:]
        var previous: [Key: Pair] = [:]
    }

    private let shards: [Shard]
    private let perShard: Int
    /// The salts of ``Key``: random per cache.
    let salts = (Int.random(in: .min ... .max), Int.random(in: .min ... .max))

    /// - Parameter capacity: tokens kept per generation, over all shards; 0 disables the cache.
    init(capacity: Int, shards: Int = 16) {
        let count = max(1, shards)
        self.shards = (0..<count).map { _ in Shard() }
        self.perShard = capacity / count
    }

    var isEnabled: Bool { perShard > 0 }

    private func shard(_ key: Key) -> Shard {
        shards[Int(key.b % UInt64(shards.count))]
    }

    func lookup(_ key: Key, at: Double) -> Verdict? {
        guard isEnabled else { return nil }
        let shard = shard(key)
        shard.lock.lock()
        defer { shard.lock.unlock() }
        return (shard.current[key] ?? shard.previous[key])?.verdict(at: at)
    }

    /// Remembers `entry` for `key`, with the verdict before it: a log presents a token over a short span, so the
    /// last two intervals are the ones most likely asked for next.
    func insert(_ key: Key, _ entry: Entry) {
        guard isEnabled else { return }
        let shard = shard(key)
        shard.lock.lock()
        defer { shard.lock.unlock() }
        if let pair = shard.current[key] {
            shard.current[key] = Pair(latest: entry, earlier: pair.latest)
            return
        }
        if shard.current.count >= perShard {
            shard.previous = shard.current
            shard.current = [:]
            shard.current.reserveCapacity(perShard)
        }
        shard.current[key] = Pair(latest: entry, earlier: shard.previous[key]?.latest)
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
