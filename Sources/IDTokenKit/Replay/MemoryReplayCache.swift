import Synchronization

/// A replay cache in this process's memory: sharded, lock-striped and bounded (DESIGN §6).
///
/// ```swift
/// let replay = MemoryReplayCache(capacity: 1_000_000)
/// guard try replay.insertIfAbsentNow(entry, now: now) else { /* a replay: refuse the token */ }
/// ```
///
/// Entries live in `shardCount` independent open-addressing tables, each behind its own small lock, so that
/// threads checking different tokens rarely meet: the shard is picked by the top bits of the token's digest,
/// which is uniformly random. A check costs one lock and, usually, one or two probes of a table that never
/// allocates after `init`.
///
/// **Bounded.** The cache holds at most ``capacity`` entries (each shard holds at most its share, so it may
/// refuse slightly before the total reaches `capacity` when live tokens spread unevenly; size it with some
/// headroom: the number of tokens accepted per `exp + leeway` window). When a shard is full of live entries
/// it refuses the new token with ``TokenError`` code `replay_store_unavailable` and a message saying the cache is
/// full (the token was not judged: it may be presented again once entries expire) — it never forgets a live
/// entry, since that would let its token be accepted twice. Each shard's table starts small and doubles as entries
/// arrive (one pass over that shard per doubling), to at most 64–128 bytes per unit of capacity.
///
/// **Reclamation without stalls.** Expired entries (`now >= expiresAt`) are reclaimed a couple of slots per
/// insertion by a cursor that walks each shard's table, and a probe reuses any expired slot it passes. Only
/// an insertion into a *full* shard scans further, and only when the shard's earliest expiry has passed (a
/// full shard of live entries refuses at once); that scan touches one shard of `capacity / shardCount`
/// entries, under that shard's lock only.
///
/// **Time.** `now` is the caller's clock. An entry is forgotten once a check with `now >= expiresAt` reaches
/// it, so callers should pass a clock that does not run backwards by more than the leeway (an audit that
/// judges records at their own times should feed them roughly in time order).
///
/// The key is the issuer mixed with ``ReplayEntry/tokenDigest`` (the SHA-256 of the signed `header.payload`);
/// digests other than 32 bytes long are hashed to 32 bytes first. Keys are assumed to be SHA-256 outputs of
/// content whose signature verified, so nobody can choose them to crowd one shard or one probe sequence.
public final class MemoryReplayCache: SynchronousReplayCache {
    /// The most entries the cache holds.
    public let capacity: Int
    /// The number of independently locked shards.
    public let shardCount: Int

    private let shards: [Shard]
    private let shardMask: Int
    private let refusals = Atomic<Int>(0)

    /// Tokens refused because their shard was full of live entries (`replay_store_unavailable`).
    public var fullCount: Int { refusals.load(ordering: .relaxed) }

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - capacity: the most live entries to hold (at least 1).
    ///   - shardCount: how many independently locked shards to spread entries over; rounded down to a power of
    ///     two, at most 64 and at most `capacity`. More shards mean less contention between threads, smaller
    ///     shards a less even fill. By default, 64 shards of at least 1,024 entries each, or fewer shards for a
    ///     smaller capacity, so that no shard fills up much before the whole cache does.
    public init(capacity: Int, shardCount: Int? = nil) {
        precondition(capacity >= 1, "a replay cache needs a capacity of at least one entry")
        let wanted = shardCount ?? max(1, capacity / 1024)
        var shards = 1
        while shards * 2 <= min(wanted, 64, capacity) { shards *= 2 }
        self.capacity = capacity
        self.shardCount = shards
        self.shardMask = shards - 1
        self.shards = (0..<shards).map { index in
            Shard(limit: capacity / shards + (index < capacity % shards ? 1 : 0))
        }
    }

    /// Records `entry` unless it is already present and not yet expired as of `now` (Unix seconds).
    ///
    /// - Returns: `true` when the entry was new (accept the token), `false` when it is a replay. An entry whose
    ///   `expiresAt` is already `<= now` is not stored and gives `true`: its token is expired and cannot be
    ///   accepted anyway.
    /// - Throws: ``TokenError`` with code `replay_store_unavailable` when the entry's shard is full of live entries.
    public func insertIfAbsentNow(_ entry: ReplayEntry, now: Int64) throws(TokenError) -> Bool {
        guard entry.expiresAt > now else { return true }
        let key = MemoryReplayKey(entry)
        switch shard(for: key).insert(key, expiresAt: entry.expiresAt, now: now) {
        case .inserted:
            return true
        case .present, .held:
            return false
        case .full:
            throw full()
        }
    }

    private func shard(for key: MemoryReplayKey) -> Shard { shards[Int(truncatingIfNeeded: key.w0 >> 58) & shardMask] }

    /// A shard full of live entries: counted, and refused as the store's failure, not the token's.
    private func full() -> TokenError {
        refusals.add(1, ordering: .relaxed)
        let capacity = self.capacity
        return TokenError(.replayStoreUnavailable,
            "the replay store could not answer: the in-memory replay cache is full (capacity \(capacity) live tokens), so this token cannot be "
            + "recorded; it is refused rather than risk accepting it twice. Raise the cache's capacity, or "
            + "shorten the token lifetime or leeway")
    }

    /// Holds `entry` for `hold` seconds (at most until its expiry) unless another delivery holds or committed it
    /// (``ReplayReservation``). A hold counts towards the capacity like an entry.
    /// - Throws: ``TokenError`` `replay_store_unavailable` when the entry's shard is full of live entries.
    public func reserve(_ entry: ReplayEntry, hold: Int64, now: Int64) async throws(TokenError) -> ReplayReservation.Outcome {
        let reservation = ReplayReservation(entry: entry, owner: ReplayReservation.newOwner())
        guard entry.expiresAt > now else { return .reserved(reservation) }
        let key = MemoryReplayKey(entry)
        let until = min(entry.expiresAt, now + max(hold, 1))
        switch shard(for: key).table.withCriticalSection({ $0.reserve(key, until: until, owner: reservation.owner, now: now) }) {
        case .inserted: return .reserved(reservation)
        case .present: return .committed
        case .held: return .held
        case .full: throw full()
        }
    }

    /// Keeps the reserved entry until its expiry, if `reservation` still holds it (or its hold ended unclaimed).
    /// - Throws: ``TokenError`` `replay_store_unavailable` when the hold ended, its slot was reclaimed, and the
    ///   shard is now full of live entries.
    public func commit(_ reservation: ReplayReservation, now: Int64) async throws(TokenError) {
        let entry = reservation.entry
        guard entry.expiresAt > now else { return }
        let key = MemoryReplayKey(entry)
        let outcome = shard(for: key).table.withCriticalSection {
            $0.commit(key, owner: reservation.owner, expiresAt: entry.expiresAt, now: now)
        }
        if outcome == .full { throw full() }
    }

    /// Forgets the reserved entry, if `reservation` still holds it.
    public func release(_ reservation: ReplayReservation) async throws(TokenError) {
        let key = MemoryReplayKey(reservation.entry)
        shard(for: key).table.withCriticalSection { $0.release(key, owner: reservation.owner) }
    }

    /// The number of entries held, live or expired but not yet reclaimed. Takes every shard's lock in turn:
    /// for monitoring and tests, not for the verification path.
    public var count: Int {
        shards.reduce(0) { total, shard in total + shard.table.withCriticalSection { $0.count } }
    }
}

/// 192 bits identifying one token of one issuer: the first 24 bytes of the signature digest, with a hash of the
/// issuer folded into the first word. Both parts must match for two keys to be equal. 192 bits of SHA-256
/// output make an accidental match between two distinct tokens far less likely than any hardware fault, and
/// keep a table slot (key + expiry) at 32 bytes, two to a cache line.
struct MemoryReplayKey: Hashable {
    var w0: UInt64, w1: UInt64, w2: UInt64

    init(w0: UInt64, w1: UInt64, w2: UInt64) {
        (self.w0, self.w1, self.w2) = (w0, w1, w2)
    }

    init(_ entry: ReplayEntry) {
        let digest = entry.tokenDigest.count == 32 ? entry.tokenDigest : SHA256.hash(entry.tokenDigest)
        self = digest.withUnsafeBytes { bytes in
            MemoryReplayKey(
                w0: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                w1: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                w2: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        }
        w0 ^= Self.issuerTag(entry.issuer)
    }

    /// A fast 64-bit hash of the issuer's UTF-8 bytes, a word at a time. It only has to tell issuers apart,
    /// not resist an adversary: the digest it is mixed with already does that.
    static func issuerTag(_ issuer: String) -> UInt64 {
        var issuer = issuer
        return issuer.withUTF8 { bytes -> UInt64 in
            let raw = UnsafeRawBufferPointer(bytes)
            var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: raw.count)
            var offset = 0
            while offset + 8 <= raw.count {
                h = (h ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
                h ^= h >> 32
                offset += 8
            }
            if offset < raw.count {
                var tail: UInt64 = 0
                for index in offset..<raw.count { tail = tail << 8 | UInt64(raw[index]) }
                h = (h ^ tail) &* 0xFF51_AFD7_ED55_8CCD
            }
            h ^= h >> 33
            h &*= 0xC4CE_B9FE_1A85_EC53
            h ^= h >> 33
            return h
        }
    }
}

/// One lock stripe. The padding keeps each shard's lock and counters on cache lines of their own, so that two
/// threads working on different shards never invalidate each other's lines.
private final class Shard: Sendable {
    let table: Mutex<ShardTable>
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                          UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    init(limit: Int) { table = Mutex(ShardTable(limit: limit)) }

    func insert(_ key: MemoryReplayKey, expiresAt: Int64, now: Int64) -> InsertOutcome {
        table.withCriticalSection { $0.insert(key, expiresAt: expiresAt, now: now) }
    }
}

/// What an insertion or a reservation found: stored (or reserved), already there (committed), held by another
/// reservation, or a shard full of live entries.
enum InsertOutcome: Sendable { case inserted, present, held, full }

/// An open-addressing hash table with linear probing, at most half full, and backward-shift deletion (no
/// tombstones, so probe sequences stay short however many entries come and go).
///
/// The table starts small and doubles as entries arrive, up to twice the shard's limit: memory follows the
/// live entries, and a cache sized for a million tokens that holds ten thousand keeps them on a few hundred
/// pages rather than scattered over tens of megabytes (where every check would miss the TLB).
private struct ShardTable: ~Copyable {
    struct Slot {
        var key: MemoryReplayKey
        /// `empty` when the slot is free.
        var expiresAt: Int64
    }

    static let empty = Int64.min
    static let initialSize = 16
    /// Slots examined by the reclamation cursor on each insertion. With a table at least twice the number of
    /// entries, the cursor completes a lap at most every `size / 2` insertions.
    static let sweepStep = 2

    private var slots: UnsafeMutablePointer<Slot>
    private var mask: Int
    private let maximumSize: Int
    let limit: Int
    private(set) var count = 0
    /// Where the reclamation cursor stands.
    private var cursor = 0
    /// A lower bound on the expiry of every stored entry: exact after each full lap of the cursor, lowered by
    /// insertions in between. A full shard whose `earliestExpiry > now` holds nothing to reclaim.
    private var earliestExpiry = Int64.max
    /// The least expiry seen by the cursor (and inserted) during the current lap.
    private var lapMinimum = Int64.max
    /// The entries held by reservations (``ReplayReservation``): their holder and the end of the hold. Few:
    /// only deliveries that run a handler reserve, and a hold lasts minutes.
    private var holds: [MemoryReplayKey: (owner: UInt64, until: Int64)] = [:]

    init(limit: Int) {
        var size = 2
        while size < 2 * limit { size *= 2 }
        self.limit = limit
        self.maximumSize = size
        let initial = min(size, Self.initialSize)
        self.mask = initial - 1
        self.slots = Self.allocate(initial)
    }

    deinit { UnsafeMutableRawPointer(slots).deallocate() }

    /// A table of `size` free slots, aligned to a cache line so that no 32-byte slot straddles two lines.
    private static func allocate(_ size: Int) -> UnsafeMutablePointer<Slot> {
        let slots = UnsafeMutableRawPointer.allocate(byteCount: size * MemoryLayout<Slot>.stride, alignment: 64)
            .bindMemory(to: Slot.self, capacity: size)
        slots.initialize(repeating: Slot(key: MemoryReplayKey(w0: 0, w1: 0, w2: 0), expiresAt: empty), count: size)
        return slots
    }

    @inline(__always) private func home(_ key: MemoryReplayKey) -> Int { Int(truncatingIfNeeded: key.w0) & mask }

    @inline(__always) private func freeSlot(for key: MemoryReplayKey) -> Int {
        var index = home(key)
        while slots[index].expiresAt != Self.empty { index = (index + 1) & mask }
        return index
    }

    mutating func insert(_ key: MemoryReplayKey, expiresAt: Int64, now: Int64) -> InsertOutcome {
        var index = home(key)
        var reusable = -1
        while slots[index].expiresAt != Self.empty {
            if slots[index].key == key {
                if slots[index].expiresAt > now { return .present }
                // The same token after its entry expired: the entry is dead, so this is a first sighting again.
                slots[index].expiresAt = expiresAt
                noteStored(expiresAt)
                return .inserted
            }
            if reusable < 0 && slots[index].expiresAt <= now { reusable = index }
            index = (index + 1) & mask
        }
        if reusable >= 0 {
            // An expired entry on this key's own probe path: overwrite it in place, the table's shape is unchanged.
            slots[reusable] = Slot(key: key, expiresAt: expiresAt)
            noteStored(expiresAt)
            sweep(steps: Self.sweepStep, now: now)
            return .inserted
        }
        if count >= limit {
            guard reclaimOne(now: now) else { return .full }
            // Deletions shift entries backwards, so look for the free slot again.
            index = freeSlot(for: key)
        }
        if 2 * (count + 1) > mask + 1 {
            grow(now: now)
            index = freeSlot(for: key)
        }
        slots[index] = Slot(key: key, expiresAt: expiresAt)
        count += 1
        noteStored(expiresAt)
        sweep(steps: Self.sweepStep, now: now)
        return .inserted
    }

    /// The slot holding `key`, if any (live or not).
    private func find(_ key: MemoryReplayKey) -> Int? {
        var index = home(key)
        while slots[index].expiresAt != Self.empty {
            if slots[index].key == key { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Holds `key` until `until` for `owner`, unless it is live: `held` while another hold lasts, else `present`
    /// (committed, or recorded by an insertion).
    mutating func reserve(_ key: MemoryReplayKey, until: Int64, owner: UInt64, now: Int64) -> InsertOutcome {
        if let index = find(key), slots[index].expiresAt > now {
            if let hold = holds[key], hold.until > now { return .held }
            return .present
        }
        if holds.count >= 64 { holds = holds.filter { $0.value.until > now } }
        let outcome = insert(key, expiresAt: until, now: now)
        if outcome == .inserted { holds[key] = (owner, until) }
        return outcome
    }

    /// Extends `owner`'s hold on `key` to `expiresAt`, or stores the entry again when the hold ended and its slot
    /// was reclaimed. Nothing while another delivery holds it.
    mutating func commit(_ key: MemoryReplayKey, owner: UInt64, expiresAt: Int64, now: Int64) -> InsertOutcome {
        if let hold = holds[key], hold.owner != owner, hold.until > now { return .held }
        // This holder's, or a hold that ended unclaimed: the handler ran, so the entry is kept.
        holds[key] = nil
        if let index = find(key) {
            slots[index].expiresAt = expiresAt
            return .inserted
        }
        return insert(key, expiresAt: expiresAt, now: now)
    }

    /// Deletes `key` when `owner` still holds it.
    mutating func release(_ key: MemoryReplayKey, owner: UInt64) {
        guard let hold = holds[key], hold.owner == owner else { return }
        holds[key] = nil
        if let index = find(key) { delete(at: index) }
    }

    private mutating func noteStored(_ expiresAt: Int64) {
        if expiresAt < earliestExpiry { earliestExpiry = expiresAt }
        if expiresAt < lapMinimum { lapMinimum = expiresAt }
    }

    /// Doubles the table (never past twice the limit, where the limit keeps it at most half full anyway),
    /// leaving expired entries behind. Costs one pass over the shard, once per doubling.
    private mutating func grow(now: Int64) {
        let oldSlots = slots, oldSize = mask + 1
        let newSize = min(oldSize * 2, maximumSize)
        guard newSize > oldSize else { return }
        slots = Self.allocate(newSize)
        mask = newSize - 1
        count = 0
        earliestExpiry = Int64.max
        for index in 0..<oldSize {
            let slot = oldSlots[index]
            guard slot.expiresAt != Self.empty, slot.expiresAt > now else { continue }
            slots[freeSlot(for: slot.key)] = slot
            count += 1
            if slot.expiresAt < earliestExpiry { earliestExpiry = slot.expiresAt }
        }
        UnsafeMutableRawPointer(oldSlots).deallocate()
        // A new lap starts with every entry accounted for in `earliestExpiry`.
        cursor = 0
        lapMinimum = Int64.max
    }

    /// Moves the cursor until one expired entry is gone, or until the cursor has shown that none is (within two
    /// laps, since the first may start with a bound from an earlier `now`). Returns whether a slot was freed.
    private mutating func reclaimOne(now: Int64) -> Bool {
        let before = count
        while count == before && earliestExpiry <= now { sweep(steps: 1, now: now) }
        return count < before
    }

    /// Examines `steps` slots at the cursor, deleting expired entries.
    private mutating func sweep(steps: Int, now: Int64) {
        for _ in 0..<steps {
            let expiresAt = slots[cursor].expiresAt
            if expiresAt != Self.empty {
                if expiresAt <= now {
                    // The deletion may shift a later entry into this slot: look at it again next step.
                    delete(at: cursor)
                    continue
                }
                if expiresAt < lapMinimum { lapMinimum = expiresAt }
            }
            cursor = (cursor + 1) & mask
            if cursor == 0 {
                earliestExpiry = lapMinimum
                lapMinimum = Int64.max
            }
        }
    }

    /// Backward-shift deletion for linear probing: pull each later entry of the cluster into the gap when the gap
    /// lies on its probe path, so that every remaining entry stays reachable from its home slot.
    private mutating func delete(at start: Int) {
        var gap = start
        var next = (start + 1) & mask
        while slots[next].expiresAt != Self.empty {
            let wanted = home(slots[next].key)
            // Move the entry unless its home lies cyclically in (gap, next].
            let homeAfterGap = gap <= next ? (wanted > gap && wanted <= next) : (wanted > gap || wanted <= next)
            if !homeAfterGap {
                slots[gap] = slots[next]
                gap = next
            }
            next = (next + 1) & mask
        }
        slots[gap].expiresAt = Self.empty
        count -= 1
    }
}
