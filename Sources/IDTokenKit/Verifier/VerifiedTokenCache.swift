#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Remembers tokens that passed every check, so that a token presented again (a backend sees the same ID token
/// on every request of a session, for up to an hour) is answered without the signature check or JSON parsing.
///
/// Turn it on when making the verifier:
///
/// ```swift
/// let verifier = try IDTokenVerifier(profile: .firebase(projectID: "my-app"), keys: source,
///                                    cache: .capacity(100_000))
/// let token = try await verifier.verify(idToken, now: .now)   // a hit costs well under a microsecond
/// ```
///
/// **Never more permissive than a fresh verification.** A token is served from the cache only when it equals a
/// verified one byte for byte (a fast hash picks the bucket; the stored token is then compared in full), and
/// only after what may have changed since is checked again at `now`:
/// - the time claims (`exp`, `nbf`, `iat`, `auth_time`) with the profile's leeway;
/// - the key: the key that verified the signature must still be in the key source's current snapshot (a key
///   the provider withdrew stops its cached tokens at once; a reloaded set makes new key objects, so each
///   cached token is then verified afresh, once);
/// - the nonce, when the caller gives one;
/// - every profile rule that does not declare ``ClaimRule/dependsOnlyOnClaims`` (such as Firebase revocation).
///
/// Whenever one of these would fail, the token goes through the full verification instead, which reports the
/// same error a verifier without a cache would. Failures are never cached. A verifier with a replay cache
/// ignores this cache entirely, since the replay check must see every presentation.
///
/// **Bounded.** At most ``capacity`` tokens, in tables allocated up front (17 bytes a slot) that never grow: a
/// token evicts an expired one in its bucket, or else one not served since the clock hand last passed (CLOCK).
/// Each entry keeps the token, its decoded header and payload and their indexes: about 3 KB for a Firebase ID
/// token, so 100,000 entries take about 300 MB.
///
/// **Concurrent.** Tokens are spread over up to 64 shards, each behind its own lock on its own cache lines,
/// held only to find and check an entry; threads verifying different tokens rarely meet.
///
/// The cache belongs to the verifier that made it (``IDTokenVerifier/verifiedTokenCache``), so that a token
/// verified under one profile is never served under another.
public final class VerifiedTokenCache: @unchecked Sendable {
    // @unchecked: the shards are raw memory holding one `Mutex` each; everything mutable is behind those locks.

    /// How big a verified-token cache to make.
    public struct Configuration: Sendable, Equatable {
        /// The most tokens to hold (at least 1). The cache holds whole buckets, so its ``capacity`` may come
        /// out slightly lower.
        public var capacity: Int
        /// Test hook: give every token the same hash, so that all of them meet in one bucket.
        var collidesForTesting = false

        /// A cache of at most `capacity` verified tokens.
        public init(capacity: Int) { self.capacity = capacity }

        /// A cache of at most `capacity` tokens.
        public static func capacity(_ capacity: Int) -> Configuration { Configuration(capacity: capacity) }
    }

    /// The most tokens the cache holds.
    public let capacity: Int
    let shardCount: Int
    let bucketsPerShard: Int
    let ways: Int

    private let shards: UnsafeMutableRawPointer
    private let shardMask: Int
    private let hash: TokenHash
    /// Test hook: every token gets the same hash, so that all of them meet in one bucket.
    private let collideForTesting: Bool

    private let leeway: Double
    private let tokenName: String
    /// The profile's rules that a hit runs again.
    private let rechecked: [any ClaimRule]

    /// Bytes between shards: two cache lines, since adjacent-line prefetchers move lines in pairs.
    private static let shardStride = max(128, (MemoryLayout<Mutex<CacheShard>>.stride + 127) / 128 * 128)

    init(_ configuration: Configuration, profile: Profile) {
        let requested = max(1, configuration.capacity)
        let ways = min(8, requested)
        // At least 16 buckets per shard, so that rounding down to whole buckets loses under 1/16 of the capacity.
        var shardCount = 1
        while shardCount < 64 && shardCount * 2 * ways * 16 <= requested { shardCount *= 2 }
        let buckets = max(1, requested / (shardCount * ways))
        self.ways = ways
        self.shardCount = shardCount
        self.bucketsPerShard = buckets
        self.capacity = shardCount * buckets * ways
        self.shardMask = shardCount - 1
        self.hash = TokenHash(seed: UInt64.random(in: .min ... .max))
        self.collideForTesting = configuration.collidesForTesting
        self.leeway = Double(profile.leeway.seconds)
        self.tokenName = profile.tokenName
        self.rechecked = profile.rules.filter { !$0.dependsOnlyOnClaims }
        shards = UnsafeMutableRawPointer.allocate(byteCount: shardCount * Self.shardStride, alignment: 128)
        for index in 0..<shardCount {
            (shards + index * Self.shardStride).bindMemory(to: Mutex<CacheShard>.self, capacity: 1)
                .initialize(to: Mutex(CacheShard(buckets: buckets, ways: ways)))
        }
    }

    deinit {
        for index in 0..<shardCount { shard(index).deinitialize(count: 1) }
        shards.deallocate()
    }

    @inline(__always)
    private func shard(_ index: Int) -> UnsafeMutablePointer<Mutex<CacheShard>> {
        (shards + index * Self.shardStride).assumingMemoryBound(to: Mutex<CacheShard>.self)
    }

    @inline(__always)
    private func tag(_ token: UnsafeRawBufferPointer) -> UInt64 {
        let h = collideForTesting ? 0x5EED : hash(token)
        return h == 0 ? 1 : h  // 0 marks an empty slot
    }

    /// The shard from the high half of the tag; buckets use the low half.
    @inline(__always)
    private func shardIndex(_ tag: UInt64) -> Int { Int(truncatingIfNeeded: tag >> 40) & shardMask }

    // MARK: Verifier hooks

    /// The cached verification of `token`, if it is there and would pass a fresh verification at `now` with
    /// `keys` and `nonce`; nil otherwise (the caller then verifies the token in full).
    func verifiedToken<Token: TokenText>(_ token: Token, keys: JWKSet, now: Double, nonce: Nonce?) -> VerifiedToken? {
        guard let found = lookup(token, keys: keys, now: now) else { return nil }
        return recheck(found, now: now, nonce: nonce)
    }

    /// The same, with the key source's current snapshot (nil when it has none).
    func verifiedToken<Token: TokenText>(_ token: Token, keySource: any KeySource, now: Double, nonce: Nonce?) -> VerifiedToken? {
        guard let found = keySource.withCurrentKeys({ lookup(token, keys: $0, now: now) }) ?? nil else { return nil }
        return recheck(found, now: now, nonce: nonce)
    }

    /// The stored result for `token`, if its times pass at `now` and its key is in `keys`.
    @inline(__always)
    private func lookup<Token: TokenText>(_ token: Token, keys: JWKSet, now: Double) -> VerifiedToken? {
        var dropped: CachedVerification?
        let found = token.withBytes { bytes -> VerifiedToken? in
            let tag = tag(bytes)
            return shard(shardIndex(tag)).pointee.withCriticalSection { shard in
                shard.lookup(tag, bytes, keys: keys, now: now, dropped: &dropped)
            }
        }
        _ = consume dropped  // an expired entry, released outside the lock
        return found
    }

    /// `found` if the nonce and the profile's state-dependent rules still pass. These run outside every lock:
    /// a rule may take as long as it likes.
    @inline(__always)
    private func recheck(_ found: VerifiedToken, now: Double, nonce: Nonce?) -> VerifiedToken? {
        if !rechecked.isEmpty {
            let context = ClaimContext(now: now, leeway: leeway, tokenName: tokenName)
            do { for rule in rechecked { try rule.check(found.claims.object, context) } } catch { return nil }
        }
        if let nonce {
            do { try nonce.check(found.claims.object, tokenName: tokenName) } catch { return nil }
        }
        return found
    }

    /// Remembers `verified`, which just passed every check with `key`; `window` is its time window as the
    /// verification worked it out, which every hit checks again.
    func store(_ token: String, _ verified: VerifiedToken, key: PublicKey, window: TimeWindow, now: Double) {
        guard !window.refuses(.exp, at: now) else { return }
        let entry = CachedVerification(token, verified.memoized(), key: key, window: window)
        let evicted = entry.token.withBytes { bytes -> CachedVerification? in
            let tag = tag(bytes)
            return shard(shardIndex(tag)).pointee.withCriticalSection { shard in shard.insert(tag, entry, bytes, now: now) }
        }
        // Released here, outside the lock, where freeing its buffers delays nobody.
        _ = consume evicted
    }

    // MARK: Monitoring

    /// The number of tokens held, expired ones not yet evicted included. Takes every shard's lock in turn:
    /// for monitoring and tests, not for the request path.
    public var count: Int {
        (0..<shardCount).reduce(0) { total, index in total + shard(index).pointee.withCriticalSection { $0.count } }
    }

    /// Forgets every token.
    public func removeAll() {
        for index in 0..<shardCount {
            let dropped = shard(index).pointee.withCriticalSection { $0.removeAll() }
            _ = consume dropped
        }
    }
}

/// One verified token as the cache keeps it: the token, the result, the key, and the token's time window as the
/// verification worked it out, so that a hit compares numbers instead of reading JSON.
final class CachedVerification: Sendable {
    let token: String
    let verified: VerifiedToken
    let key: PublicKey
    /// Whether the header named the key by `kid` (otherwise the key set had to hold exactly one key).
    let keyNamedByKid: Bool
    /// The bounds the verifier's time check used: a hit asks the same ``TimeWindow``, so that both give the same
    /// verdict to the bit.
    let window: TimeWindow

    init(_ token: String, _ verified: VerifiedToken, key: PublicKey, window: TimeWindow) {
        var token = token
        token.makeContiguousUTF8()
        self.token = token
        self.verified = verified
        self.key = key
        self.keyNamedByKid = verified.header.hasKid
        self.window = window
    }

    /// Expired at `now` (the entry may go).
    @inline(__always)
    func isExpired(at now: Double) -> Bool { window.refuses(.exp, at: now) }

    @inline(__always)
    func hasToken(_ bytes: UnsafeRawBufferPointer) -> Bool {
        token.utf8.withContiguousStorageIfAvailable { stored in
            ByteSearch.equal(UnsafeRawBufferPointer(stored), bytes)
        } ?? false
    }

    /// Whether every time check passes at `now`.
    @inline(__always)
    func isWithinTimes(now: Double) -> Bool { window.contains(now) }

    /// Whether a fresh verification against `keys` would pick the same key: the very key object, by `kid`, or
    /// as the only key of a set when the header has no `kid`.
    @inline(__always)
    func keyIsCurrent(in keys: JWKSet) -> Bool {
        let all = keys.keys
        if keyNamedByKid {
            for candidate in all where candidate === key { return true }
            return false
        }
        return all.count == 1 && all[0] === key
    }
}

/// One shard's table: `buckets` buckets of `ways` slots, allocated once. A token lives only in its own bucket,
/// so a lookup examines at most `ways` tags (one cache line for eight).
///
/// Entries are held as `Unmanaged` references, retained on insertion and released on removal, so that finding
/// and checking one under the lock touches no reference count: two threads serving different tokens share no
/// cache line, and two serving the same token share only the returned value's buffers.
struct CacheShard: ~Copyable, @unchecked Sendable {
    // @unchecked: the table owns its memory alone and lives inside a `Mutex`, which serialises every access.
    private let tags: UnsafeMutablePointer<UInt64>
    private let entries: UnsafeMutablePointer<Unmanaged<CachedVerification>?>
    /// Set when a slot's token is served; the clock hand clears it and evicts slots it finds clear.
    private let referenced: UnsafeMutablePointer<Bool>
    private let buckets: Int
    private let ways: Int
    private var hand = 0
    private(set) var count = 0

    init(buckets: Int, ways: Int) {
        self.buckets = buckets
        self.ways = ways
        let slots = buckets * ways
        tags = .allocate(capacity: slots)
        tags.initialize(repeating: 0, count: slots)
        entries = .allocate(capacity: slots)
        entries.initialize(repeating: nil, count: slots)
        referenced = .allocate(capacity: slots)
        referenced.initialize(repeating: false, count: slots)
    }

    deinit {
        for slot in 0..<(buckets * ways) { entries[slot]?.release() }
        tags.deallocate()
        entries.deallocate()
        referenced.deallocate()
    }

    @inline(__always)
    private func firstSlot(_ tag: UInt64) -> Int {
        Int(truncatingIfNeeded: ((tag & 0xFFFF_FFFF) &* UInt64(buckets)) >> 32) &* ways
    }

    /// The token's verified result, when it is here, unexpired, within its other time claims, and its key is in
    /// `keys`. An expired entry is dropped, and returned in `dropped` for the caller to release.
    @inline(__always)
    mutating func lookup(_ tag: UInt64, _ token: UnsafeRawBufferPointer, keys: JWKSet, now: Double,
                         dropped: inout CachedVerification?) -> VerifiedToken? {
        let first = firstSlot(tag)
        for slot in first..<(first &+ ways) where tags[slot] == tag {
            guard let unmanaged = entries[slot] else { continue }
            enum Verdict { case other, expired, stale, fresh }
            let verdict = unmanaged._withUnsafeGuaranteedRef { entry -> Verdict in
                guard entry.hasToken(token) else { return .other }
                if entry.isExpired(at: now) { return .expired }
                return entry.isWithinTimes(now: now) && entry.keyIsCurrent(in: keys) ? .fresh : .stale
            }
            switch verdict {
            case .other: continue
            case .expired:
                dropped = remove(slot)
                return nil
            case .stale:
                return nil
            case .fresh:
                if !referenced[slot] { referenced[slot] = true }
                return unmanaged._withUnsafeGuaranteedRef { $0.verified }
            }
        }
        return nil
    }

    /// Puts `entry` in its bucket: in place of the same token, else in a free slot, else over an expired entry,
    /// else over the entry the clock hand picks. Returns the entry it displaced, for the caller to release.
    mutating func insert(_ tag: UInt64, _ entry: CachedVerification, _ token: UnsafeRawBufferPointer, now: Double) -> CachedVerification? {
        let first = firstSlot(tag)
        var free = -1, expired = -1
        for slot in first..<(first + ways) {
            guard let existing = entries[slot] else {
                if free < 0 { free = slot }
                continue
            }
            let (same, stale) = existing._withUnsafeGuaranteedRef { ($0.hasToken(token), $0.isExpired(at: now)) }
            if tags[slot] == tag && same {
                entries[slot] = Unmanaged.passRetained(entry)
                return existing.takeRetainedValue()
            }
            if expired < 0 && stale { expired = slot }
        }
        let slot = free >= 0 ? free : expired >= 0 ? expired : clockVictim(first)
        let displaced = entries[slot]?.takeRetainedValue()
        if displaced == nil { count += 1 }
        tags[slot] = tag
        entries[slot] = Unmanaged.passRetained(entry)
        referenced[slot] = false
        return displaced
    }

    /// The first slot of the bucket, from a position that moves on each eviction, that was not served since the
    /// hand last passed it; clears the marks it passes.
    private mutating func clockVictim(_ first: Int) -> Int {
        let start = hand % ways
        hand &+= 1
        for step in 0..<(2 * ways) {
            let slot = first + (start + step) % ways
            if !referenced[slot] { return slot }
            referenced[slot] = false
        }
        return first + start
    }

    /// Empties `slot`; returns its entry for the caller to release outside the lock.
    private mutating func remove(_ slot: Int) -> CachedVerification? {
        let entry = entries[slot]?.takeRetainedValue()
        tags[slot] = 0
        entries[slot] = nil
        referenced[slot] = false
        if entry != nil { count -= 1 }
        return entry
    }

    /// Empties the table; returns the entries for the caller to release outside the lock.
    mutating func removeAll() -> [CachedVerification] {
        var old: [CachedVerification] = []
        old.reserveCapacity(count)
        for slot in 0..<(buckets * ways) {
            if let entry = remove(slot) { old.append(entry) }
        }
        return old
    }
}
