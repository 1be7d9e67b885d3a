import Foundation
import IDTokenKit

/// Remembers verdicts so that a token that appears many times in a log is verified once.
///
/// A verdict depends on the time of judgement only through the token's `exp`, `nbf`, `iat` and `auth_time`
/// (each shifted by the leeway; see ``Judgement/timeThresholds``). Each entry therefore holds the interval of
/// times between the thresholds around the time it was judged at, and answers only for times inside it: the
/// same token judged before and after its expiry gets two verdicts, each computed once. Entries are keyed by a
/// keyed 128-bit hash (SipHash-2-4) of the token's exact bytes and the record's nonce (``Key``).
///
/// Memory is bounded: each of the shards keeps two generations of at most `capacity / shards` tokens and drops
/// the older generation when the newer fills. Each shard has its own lock, held for a dictionary lookup.
final class VerdictCache: @unchecked Sendable {
    /// A 128-bit keyed hash (``SipHash128``, under a key random per cache) of the token's exact bytes and the
    /// record's nonce. Nobody writing a log can aim two tokens at one key: two different records share a key
    /// only by chance, about 2⁻¹²⁸ for a pair. (SHA-256, which this replaced, cost about a tenth of an RSA
    /// verification per record, paid by every record of a log of distinct tokens.)
    struct Key: Hashable, Sendable {
        let a: UInt64, b: UInt64

        init(token: String, nonce: String?, key: (UInt64, UInt64)) {
            var hash = SipHash128(key: key)
            Key.update(&hash, token)
            if let nonce {
                hash.update(1)
                Key.update(&hash, nonce)
            } else {
                hash.update(0)
            }
            (a, b) = hash.finalize()
        }

        /// The string's length, then its UTF-8 bytes: a token and a nonce cannot trade bytes.
        private static func update(_ hash: inout SipHash128, _ text: String) {
            hash.update(UInt64(text.utf8.count))
            if text.utf8.withContiguousStorageIfAvailable({ hash.update(UnsafeRawBufferPointer($0)) }) == nil {
                var copy = text
                copy.withUTF8 { hash.update(UnsafeRawBufferPointer($0)) }
            }
        }

        func hash(into hasher: inout Hasher) { hasher.combine(a) }
    }

    /// A cheap fingerprint of the token and nonce (their last bytes and lengths), taken before the key: it picks
    /// the shard, and a shard that holds no entry with this fingerprint answers "not held" without the key's
    /// hash over the whole token. Two tokens can share a fingerprint (anyone can make them); that costs the key
    /// and a dictionary lookup, never a wrong verdict, which only the key decides.
    struct Probe: Sendable {
        let value: UInt64

        init(token: String, nonce: String?) {
            var value = Probe.fold(token)
            if let nonce { value = (value ^ 0xA5A5_A5A5_A5A5_A5A5) &* 0x9E37_79B9_7F4A_7C15 ^ Probe.fold(nonce) }
            self.value = value ^ (value >> 29)
        }

        /// The last eight bytes (for a token, the end of its signature) and the length, mixed.
        private static func fold(_ text: String) -> UInt64 {
            let count = text.utf8.count
            var tail: UInt64 = 0
            let read: Bool? = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                for byte in bytes.suffix(8) { tail = tail << 8 | UInt64(byte) }
                return true
            }
            if read == nil {
                for byte in text.utf8.suffix(8) { tail = tail << 8 | UInt64(byte) }
            }
            return (tail ^ UInt64(truncatingIfNeeded: count) << 1) &* 0xBF58_476D_1CE4_E5B9
        }
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
        /// The ``Probe`` values of the entries of each generation.
        var currentProbes: Set<UInt64> = []
        var previousProbes: Set<UInt64> = []
    }

    private let shards: [Shard]
    private let perShard: Int
    /// The key of ``Key``'s hash: random per cache.
    let hashKey = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))

    /// - Parameter capacity: tokens kept per generation, over all shards; 0 disables the cache.
    init(capacity: Int, shards: Int = 16) {
        let count = max(1, shards)
        self.shards = (0..<count).map { _ in Shard() }
        self.perShard = capacity / count
    }

    var isEnabled: Bool { perShard > 0 }

    private func shard(_ probe: Probe) -> Shard {
        shards[Int((probe.value >> 32) % UInt64(shards.count))]
    }

    /// The verdict for the token of `probe` at `at`, if held. `key` is called (once) only when an entry with the
    /// same probe is held.
    func lookup(_ probe: Probe, at: Double, key: () -> Key) -> Verdict? {
        guard isEnabled else { return nil }
        let shard = shard(probe)
        shard.lock.lock()
        defer { shard.lock.unlock() }
        if shard.currentProbes.contains(probe.value) || shard.previousProbes.contains(probe.value) {
            let key = key()
            return (shard.current[key] ?? shard.previous[key])?.verdict(at: at)
        }
        return nil
    }

    /// Remembers the entry for the token of `probe` (`key` is its key), with the verdict before it: a log
    /// presents a token over a short span, so the last two intervals are the ones most likely asked for next.
    /// `key` and `entry` are called only when the entry is kept.
    func insert(_ probe: Probe, key: () -> Key, entry: () -> Entry) {
        guard isEnabled else { return }
        let shard = shard(probe)
        var dropped: [Key: Pair] = [:]
        shard.lock.lock()
        let held = shard.currentProbes.contains(probe.value)
        if held, case let key = key(), let pair = shard.current[key] {
            shard.current[key] = Pair(latest: entry(), earlier: pair.latest)
        } else {
            let key = key()
            if shard.current.count >= perShard {
                swap(&dropped, &shard.previous)
                shard.previous = shard.current
                shard.current = [:]
                shard.current.reserveCapacity(perShard)
                shard.previousProbes = shard.currentProbes
                shard.currentProbes = []
                shard.currentProbes.reserveCapacity(perShard)
            }
            let earlier = shard.previousProbes.contains(probe.value) ? shard.previous[key]?.latest : nil
            shard.current[key] = Pair(latest: entry(), earlier: earlier)
            shard.currentProbes.insert(probe.value)
        }
        shard.lock.unlock()
        // The dropped generation's verdicts are released here, outside the lock.
        withExtendedLifetime(dropped) {}
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
