import Foundation
import IDTokenKit

/// Remembers verdicts so that a token that appears many times in a log is verified once.
///
/// A verdict depends on the time of judgement only through the token's `exp`, `nbf`, `iat` and `auth_time`
/// (each shifted by the leeway; see ``ProfileVerification/timeThresholds``). Each entry therefore holds the interval of
/// times between the thresholds around the time it was judged at, and answers only for times inside it: the
/// same token judged before and after its expiry gets two verdicts, each computed once.
///
/// Entries are found by a cheap hash of the token and nonce (``hash(token:nonce:)``, seeded at random per cache)
/// and confirmed by comparing the token's exact text and the nonce with the ones stored: a verdict is only ever
/// reused for the very same token and nonce, whatever hash values anyone can make collide. A collision costs a
/// verification, never a wrong verdict.
///
/// Files: this one holds the cache and its shards; `VerdictCache+Generation.swift` the table of one generation;
/// `VerdictCache+SingleFlight.swift` the waiting that lets a token repeated across workers be verified once.
///
/// Memory is bounded: each of the shards keeps two generations of at most `capacity / shards` tokens, whose text
/// takes at most 2 KiB a token of that count, and drops the older generation when the newer fills. Each shard
/// has its own lock, held for a probe of its tables.
final class VerdictCache: @unchecked Sendable {
    /// A verdict and the interval of times `[from, until)` for which it holds.
    struct Entry: Sendable {
        let from: Double
        let until: Double
        let verdict: Verdict
    }

    /// What is reused: everything an ``AuditResult`` needs besides the record's own line, id and time. A class,
    /// so that an entry is a pointer: cheap to move inside the tables, one allocation per verdict, and referred to
    /// (not copied) by every result it judges.
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

    final class Shard {
        /// Guards the tables and `inFlight`; waited on by a worker whose token another worker is judging.
        let lock = NSCondition()
        // Read and written only with `lock` held, so the run-time exclusivity checks (several a record) are left
        // out.
        @exclusivity(unchecked) var current: Generation
        @exclusivity(unchecked) var previous: Generation
        /// The marks of tokens a worker is judging now (at most one a worker): another worker that meets the
        /// same token waits for that verdict instead of verifying it a second time.
        @exclusivity(unchecked) var inFlight: [UInt64] = []
        /// Workers waiting on `lock` for another worker's verdict: only then does an insert wake anyone.
        @exclusivity(unchecked) var waiting = 0

        /// The verdict held for the token at `at` (the current generation's, else the previous one's), and whether
        /// either generation holds the token at all. Call with `lock` held.
        func find(_ mark: UInt64, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?,
                  at: Double) -> (verdict: Verdict?, held: Bool) {
            if let index = current.find(mark, token, nonce) { return (current.verdict(at: index, for: at), true) }
            if let index = previous.find(mark, token, nonce) { return (previous.verdict(at: index, for: at), true) }
            return (nil, false)
        }

        init(limit: Int, pageBytes: Int) {
            // The default capacity's table from the start; a very large capacity grows as tokens come.
            current = Generation(roomFor: min(limit, 4096), pageBytes: pageBytes)
            previous = Generation(roomFor: 0, pageBytes: pageBytes)
        }
    }

    private let shards: [Shard]
    private let perShard: Int
    /// The most bytes of token and nonce text a shard's generation holds: tokens are at most a profile's size
    /// limit, not 1 KB, and a log of large tokens must not make the cache large. Typical ID tokens (about 1 KB)
    /// fill a generation's count first.
    private let perShardBytes: Int
    /// The size of the pages every generation copies token text into.
    let pageBytes: Int
    static let textBytesPerToken = 2048
    /// The seeds of ``hash(token:nonce:)``: random per cache, so that nobody writing a log knows which tokens
    /// share a slot.
    private let seeds = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))

    /// - Parameter capacity: tokens kept per generation, over all shards; 0 disables the cache.
    /// - Parameter shards: how many parts, each with its own lock, the tokens are spread over.
    init(capacity: Int, shards: Int = 16) {
        let count = max(1, shards)
        let perShard = capacity / count
        self.perShard = perShard
        self.perShardBytes = perShard * VerdictCache.textBytesPerToken
        // A generation's pages are at most an eighth of the text it may hold: the last page of each generation is
        // half empty on average, and with many small shards 32 KiB pages would leave megabytes of it.
        let pageBytes = min(Generation.largestPageBytes, max(4096, perShardBytes / 8))
        self.pageBytes = pageBytes
        self.shards = (0..<count).map { _ in Shard(limit: perShard, pageBytes: pageBytes) }
    }

    var isEnabled: Bool { perShard > 0 }

    /// The slot hash of a token and nonce: IDTokenKit's ``TokenHash`` of the token under this cache's random seed,
    /// then of the nonce under a seed drawn from that (a record without a nonce and one with an empty nonce hash
    /// apart). It only spreads tokens over slots and shards; identity is decided by comparing the text.
    func hash(token: some Collection<UInt8>, nonce: String?) -> UInt64 {
        VerdictCache.withBytes(token, nonce) { token, nonce in
            let h = TokenHash(seed: seeds.0)(token)
            guard let nonce else { return h }
            return TokenHash(seed: h ^ seeds.1)(nonce)
        }
    }

    func shard(_ hash: UInt64) -> Shard {
        shards[Int((hash >> 40) % UInt64(shards.count))]
    }

    /// The verdict for `token` (with `nonce`) at `at`, if held; `hash` is ``hash(token:nonce:)`` of them.
    func lookup(_ hash: UInt64, token: some Collection<UInt8>, nonce: String?, at: Double) -> Verdict? {
        guard isEnabled else { return nil }
        let mark = hash | 1
        let shard = shard(hash)
        return VerdictCache.withBytes(token, nonce) { token, nonce -> Verdict? in
            shard.lock.lock()
            defer { shard.lock.unlock() }
            return shard.find(mark, token, nonce, at: at).verdict
        }
    }

    /// Remembers `entry` for `token` (with `nonce`; `hash` is their ``hash(token:nonce:)``), with the verdict
    /// before it: a log presents a token over a short span, so the last two intervals are the ones most likely
    /// asked for next. A token whose text alone is over a generation's byte budget is not remembered. With
    /// `releasing`, ends the claim ``lookupOrClaim(_:token:nonce:at:waits:)`` gave and wakes the workers waiting on it.
    /// With `fresh` (the claim's lookup found the token in neither generation), the token is added without being
    /// looked for again: only the claim's holder adds it meanwhile, and on a log of distinct tokens those two
    /// probes were each a cache miss a record. (A worker that gave up waiting adds it unclaimed; a second slot for
    /// the same token is then only a slot spent.)
    func insert(_ hash: UInt64, token: some Collection<UInt8>, nonce: String?, entry: Entry, releasing: Bool = false,
                fresh: Bool = false) {
        guard isEnabled else { return }
        let mark = hash | 1
        let shard = shard(hash)
        var dropped: Generation?
        VerdictCache.withBytes(token, nonce) { token, nonce in
            shard.lock.lock()
            defer {
                if releasing, let k = shard.inFlight.firstIndex(of: mark) {
                    shard.inFlight.remove(at: k)
                    if shard.waiting > 0 { shard.lock.broadcast() }
                }
                shard.lock.unlock()
            }
            let bytes = token.count + (nonce?.count ?? 0)
            guard bytes <= perShardBytes else { return }
            if !fresh, let index = shard.current.find(mark, token, nonce) {
                shard.current.push(entry, at: index)
                return
            }
            if shard.current.count >= perShard || shard.current.textBytes + bytes > perShardBytes {
                dropped = shard.previous
                shard.previous = shard.current
                // The generation before filled up, so this one most likely will too: its full table at once.
                shard.current = Generation(roomFor: perShard, pageBytes: pageBytes)
            }
            let earlier = fresh ? nil : shard.previous.find(mark, token, nonce).map { shard.previous.latest(at: $0) }
            shard.current.add(mark, token, nonce, Pair(latest: entry, earlier: earlier))
        }
        // The dropped generation's pages and verdicts are released here, outside the lock.
        withExtendedLifetime(dropped) {}
    }

    /// Calls `body` with the bytes of `token` (a slice of the record's line, or a string's UTF-8) and the UTF-8 bytes
    /// of `nonce`, in place when they are contiguous.
    static func withBytes<Token: Collection<UInt8>, R>(_ token: Token, _ nonce: String?,
                                                       _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) -> R) -> R {
        func with(_ tokenBytes: UnsafeRawBufferPointer) -> R {
            guard let nonce else { return body(tokenBytes, nil) }
            return nonce.withBorrowedUTF8 { body(tokenBytes, UnsafeRawBufferPointer($0)) }
        }
        if let result = token.withContiguousStorageIfAvailable({ with(UnsafeRawBufferPointer($0)) }) { return result }
        return Array(token).withUnsafeBytes(with)
    }
}
