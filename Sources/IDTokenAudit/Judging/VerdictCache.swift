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
    /// so that an entry is a pointer: cheap to move inside the tables, and one allocation per verdict.
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

    /// One remembered token: where its exact text and nonce (what identifies it) are in its generation's text
    /// pages, and its verdicts.
    struct Slot {
        let page: Int32
        let start: Int32
        let tokenCount: Int32
        /// -1 when the record had no nonce.
        let nonceCount: Int32
        var pair: Pair
    }

    /// One generation of a shard: an open-addressing table with linear probing, kept at most half full, grown by
    /// doubling. The hashes sit in an array of their own, so that a probe reads plain integers and compares the
    /// text only where the hash matches. Tokens are never removed one by one: a generation is dropped whole.
    ///
    /// The tokens' and nonces' bytes are copied into pages of ``pageBytes`` (a larger token gets a page of its
    /// own) rather than kept as one string each: the records' own strings are released with their batch, and
    /// pages of one size are reused as they are, not left as holes of every size in the heap.
    struct Generation {
        /// Each slot's hash with its lowest bit set; 0 marks an empty slot.
        private var hashes: [UInt64]
        private var slots: [Slot?]
        private var pages: [[UInt8]] = []
        /// Bytes of token and nonce text held.
        private(set) var textBytes = 0
        private(set) var count = 0

        static let pageBytes = 32 * 1024

        /// A table with room for `tokens` tokens before it grows.
        init(roomFor tokens: Int) {
            var size = 8
            while size < 2 * tokens { size <<= 1 }
            hashes = Array(repeating: 0, count: size)
            slots = Array(repeating: nil, count: size)
        }

        /// The slot index holding `token` with `nonce`, if held; `mark` is their hash with its lowest bit set.
        func find(_ mark: UInt64, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?) -> Int? {
            let mask = hashes.count - 1
            var i = Int(truncatingIfNeeded: mark >> 1) & mask
            while true {
                let held = hashes[i]
                if held == 0 { return nil }
                if held == mark, holds(slots[i]!, token, nonce) { return i }
                i = (i + 1) & mask
            }
        }

        /// Whether `slot` is `token` with `nonce`, byte for byte.
        private func holds(_ slot: Slot, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?) -> Bool {
            guard Int(slot.tokenCount) == token.count, Int(slot.nonceCount) == (nonce?.count ?? -1) else { return false }
            return pages[Int(slot.page)].withUnsafeBytes { page in
                let start = Int(slot.start)
                return ByteSearch.equal(page, at: start, token)
                    && (nonce.map { ByteSearch.equal(page, at: start + token.count, $0) } ?? true)
            }
        }

        func pair(at index: Int) -> Pair { slots[index]!.pair }

        mutating func replacePair(at index: Int, with pair: Pair) { slots[index]!.pair = pair }

        /// Adds a token that is not held, copying its text and nonce.
        mutating func add(_ mark: UInt64, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?, _ pair: Pair) {
            if 2 * (count + 1) > hashes.count { grow() }
            let bytes = token.count + (nonce?.count ?? 0)
            if pages.isEmpty || pages[pages.count - 1].count + bytes > pages[pages.count - 1].capacity {
                var page: [UInt8] = []
                page.reserveCapacity(max(Generation.pageBytes, bytes))
                pages.append(page)
            }
            let last = pages.count - 1
            let slot = Slot(page: Int32(last), start: Int32(pages[last].count), tokenCount: Int32(token.count),
                            nonceCount: Int32(nonce?.count ?? -1), pair: pair)
            pages[last].append(contentsOf: token)
            if let nonce { pages[last].append(contentsOf: nonce) }
            textBytes += bytes
            put(mark, slot)
            count += 1
        }

        private mutating func put(_ mark: UInt64, _ slot: Slot) {
            let mask = hashes.count - 1
            var i = Int(truncatingIfNeeded: mark >> 1) & mask
            while hashes[i] != 0 { i = (i + 1) & mask }
            hashes[i] = mark
            slots[i] = slot
        }

        private mutating func grow() {
            let oldHashes = hashes, oldSlots = slots
            hashes = Array(repeating: 0, count: oldHashes.count * 2)
            slots = Array(repeating: nil, count: oldHashes.count * 2)
            for (mark, slot) in zip(oldHashes, oldSlots) where mark != 0 { put(mark, slot!) }
        }
    }

    private final class Shard {
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

        /// The verdict held for the token at `at`: the current generation's, else the previous one's. Call with
        /// `lock` held.
        func verdict(_ mark: UInt64, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?, at: Double) -> Verdict? {
            if let index = current.find(mark, token, nonce) { return current.pair(at: index).verdict(at: at) }
            if let index = previous.find(mark, token, nonce) { return previous.pair(at: index).verdict(at: at) }
            return nil
        }

        init(limit: Int) {
            // The default capacity's table from the start; a very large capacity grows as tokens come.
            current = Generation(roomFor: min(limit, 4096))
            previous = Generation(roomFor: 0)
        }
    }

    private let shards: [Shard]
    private let perShard: Int
    /// The most bytes of token and nonce text a shard's generation holds: tokens are at most a profile's size
    /// limit, not 1 KB, and a log of large tokens must not make the cache large. Typical ID tokens (about 1 KB)
    /// fill a generation's count first.
    private let perShardBytes: Int
    static let textBytesPerToken = 2048
    /// The seeds of ``hash(token:nonce:)``: random per cache, so that nobody writing a log knows which tokens
    /// share a slot.
    private let seeds = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max),
                         UInt64.random(in: .min ... .max))

    /// - Parameter capacity: tokens kept per generation, over all shards; 0 disables the cache.
    init(capacity: Int, shards: Int = 16) {
        let count = max(1, shards)
        let perShard = capacity / count
        self.shards = (0..<count).map { _ in Shard(limit: perShard) }
        self.perShard = perShard
        self.perShardBytes = perShard * VerdictCache.textBytesPerToken
    }

    var isEnabled: Bool { perShard > 0 }

    /// The slot hash of a token and nonce: 16 bytes a step, each step one 64×64→128-bit multiplication folded to
    /// 64 bits (as wyhash does), under this cache's random seeds. It only spreads tokens over slots and shards;
    /// identity is decided by comparing the text.
    func hash(token: String, nonce: String?) -> UInt64 {
        var h = VerdictCache.hash(token, seed: seeds.0, secret: seeds.1)
        if let nonce {
            h = VerdictCache.hash(nonce, seed: h ^ seeds.2, secret: seeds.1)
        }
        return h
    }

    private static func hash(_ text: String, seed: UInt64, secret: UInt64) -> UInt64 {
        text.withBorrowedUTF8 { hash(UnsafeRawBufferPointer($0), seed: seed, secret: secret) }
    }

    @inline(__always)
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64, secret: UInt64) -> UInt64 {
        let count = bytes.count
        var h = seed ^ fold(UInt64(truncatingIfNeeded: count) ^ secret, 0x9E37_79B9_7F4A_7C15)
        var a: UInt64 = 0, b: UInt64 = 0
        if count >= 16 {
            var i = 0
            while count - i > 16 {
                h = fold(bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ secret,
                         bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self) ^ h)
                i += 16
            }
            // The last 16 bytes, overlapping the step before when the length is not a multiple of 16.
            a = bytes.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
            b = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else {
            for k in 0..<count {
                if k < 8 { a |= UInt64(bytes[k]) << (8 * UInt64(k)) } else { b |= UInt64(bytes[k]) << (8 * UInt64(k - 8)) }
            }
        }
        h = fold(a ^ secret, b ^ h)
        return fold(h ^ 0xBF58_476D_1CE4_E5B9, secret ^ 0x94D0_49BB_1331_11EB)
    }

    private func shard(_ hash: UInt64) -> Shard {
        shards[Int((hash >> 40) % UInt64(shards.count))]
    }

    /// The verdict for `token` (with `nonce`) at `at`, if held; `hash` is ``hash(token:nonce:)`` of them.
    func lookup(_ hash: UInt64, token: String, nonce: String?, at: Double) -> Verdict? {
        guard isEnabled else { return nil }
        let mark = hash | 1
        let shard = shard(hash)
        return VerdictCache.withBytes(token, nonce) { token, nonce -> Verdict? in
            shard.lock.lock()
            defer { shard.lock.unlock() }
            return shard.verdict(mark, token, nonce, at: at)
        }
    }

    /// What ``lookupOrClaim(_:token:nonce:at:)`` found.
    enum Lookup {
        /// The verdict held for the token at that time.
        case hit(Verdict)
        /// No verdict: the caller judges the token. When `claimed`, other workers wait for its verdict, and the
        /// caller must pass it to ``insert(_:token:nonce:entry:releasing:)`` with `releasing: true`.
        case judge(claimed: Bool)
    }

    /// How long a worker waits for another worker's verdict on the same token before judging it itself: a
    /// verification takes microseconds, so this is only a guard against a worker that never answers.
    static let patience: TimeInterval = 2

    /// The verdict for `token` (with `nonce`) at `at`, if held; otherwise the right to judge it. While another
    /// worker judges a token with the same hash, waits for that verdict first, so that a token repeated in batches
    /// judged at the same moment is verified once. (A different token that shares the hash only waits.)
    func lookupOrClaim(_ hash: UInt64, token: String, nonce: String?, at: Double) -> Lookup {
        guard isEnabled else { return .judge(claimed: false) }
        let mark = hash | 1
        let shard = shard(hash)
        return VerdictCache.withBytes(token, nonce) { token, nonce -> Lookup in
            shard.lock.lock()
            defer { shard.lock.unlock() }
            // The clock is read only when there is a verdict to wait for, not for every record.
            var deadline: Date?
            while true {
                if let verdict = shard.verdict(mark, token, nonce, at: at) { return .hit(verdict) }
                if !shard.inFlight.contains(mark) {
                    shard.inFlight.append(mark)
                    return .judge(claimed: true)
                }
                let until = deadline ?? Date(timeIntervalSinceNow: VerdictCache.patience)
                deadline = until
                shard.waiting += 1
                let woken = shard.lock.wait(until: until)
                shard.waiting -= 1
                if !woken { return .judge(claimed: false) }
            }
        }
    }

    /// Remembers `entry` for `token` (with `nonce`; `hash` is their ``hash(token:nonce:)``), with the verdict
    /// before it: a log presents a token over a short span, so the last two intervals are the ones most likely
    /// asked for next. A token whose text alone is over a generation's byte budget is not remembered. With
    /// `releasing`, ends the claim ``lookupOrClaim(_:token:nonce:at:)`` gave and wakes the workers waiting on it.
    func insert(_ hash: UInt64, token: String, nonce: String?, entry: Entry, releasing: Bool = false) {
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
            if let index = shard.current.find(mark, token, nonce) {
                shard.current.replacePair(at: index, with: Pair(latest: entry, earlier: shard.current.pair(at: index).latest))
                return
            }
            if shard.current.count >= perShard || shard.current.textBytes + bytes > perShardBytes {
                dropped = shard.previous
                shard.previous = shard.current
                // The generation before filled up, so this one most likely will too: its full table at once.
                shard.current = Generation(roomFor: perShard)
            }
            let earlier = shard.previous.find(mark, token, nonce).map { shard.previous.pair(at: $0).latest }
            shard.current.add(mark, token, nonce, Pair(latest: entry, earlier: earlier))
        }
        // The dropped generation's pages and verdicts are released here, outside the lock.
        withExtendedLifetime(dropped) {}
    }

    /// Calls `body` with the UTF-8 bytes of `token` and of `nonce`, in place for native strings.
    private static func withBytes<R>(_ token: String, _ nonce: String?,
                                     _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) -> R) -> R {
        token.withBorrowedUTF8 { tokenBytes in
            guard let nonce else { return body(UnsafeRawBufferPointer(tokenBytes), nil) }
            return nonce.withBorrowedUTF8 { body(UnsafeRawBufferPointer(tokenBytes), UnsafeRawBufferPointer($0)) }
        }
    }
}
