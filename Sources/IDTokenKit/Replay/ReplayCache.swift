/// What a replay cache remembers about one accepted token.
public struct ReplayEntry: Sendable, Hashable {
    /// The token's issuer (`iss`).
    public let issuer: String
    /// SHA-256 of what the issuer signed: the token's `header.payload` bytes as received.
    ///
    /// It must be the same for every acceptable form of one token. The signature segment is not: an ECDSA
    /// signature `(r, s)` also verifies as `(r, n − s)`, so anyone holding an ES256 token can make a second,
    /// different-looking copy that verifies, and a cache keyed on the signature would accept both. The signed
    /// content cannot be changed without breaking the signature, whatever the algorithm.
    public let tokenDigest: [UInt8]
    /// Unix time, in seconds, after which the entry may be forgotten: the token's `exp` plus the leeway.
    public let expiresAt: Int64

    /// An entry from its parts; ``init(signingInput:issuer:exp:leeway:)`` derives them from a token as every
    /// part of the project does (DESIGN §6).
    public init(issuer: String, tokenDigest: [UInt8], expiresAt: Int64) {
        self.issuer = issuer
        self.tokenDigest = tokenDigest
        self.expiresAt = expiresAt
    }

    /// The replay key of DESIGN §6 for an accepted token — the one derivation, used by the verifier and by the
    /// audit: the issuer and the SHA-256 of `signingInput` (the token's `header.payload` as received), kept until
    /// `exp` + `leeway` (rounded up to a whole second, the time the token stops being accepted).
    public init(signingInput: Substring, issuer: String, exp: Double, leeway: Double) {
        self.init(signingInputBytes: signingInput.utf8, issuer: issuer, exp: exp, leeway: leeway)
    }

    /// ``init(signingInput:issuer:exp:leeway:)`` from the signed bytes themselves, wherever the caller holds them
    /// (the audit: a slice of its input).
    package init<Bytes: Collection<UInt8>>(signingInputBytes: Bytes, issuer: String, exp: Double, leeway: Double) {
        var window = TimeWindow(leeway: leeway)
        window.set(.exp, exp)
        self.init(issuer: issuer, tokenDigest: SHA256.hash(signingInputBytes),
                  expiresAt: Int64(window.expiresAt.rounded(.up)))
    }
}

/// Remembers the tokens that have been accepted, so that each is accepted once (DESIGN §6).
///
/// Implementations: ``MemoryReplayCache`` (this process) and, in the `IDTokenKitRedis` product,
/// `RedisReplayCache` (shared by every process and host using one Redis).
///
/// The verifier consults it last, after every other check passed, so that a token that fails anything else
/// never takes a slot. Implementations must be exactly-once under concurrency: when two callers present the
/// same entry at once, one gets `true` and the other `false`.
public protocol ReplayCache: Sendable {
    /// Records `entry` if it is not there yet, as of `now` (Unix seconds).
    /// - Returns: `true` when the entry was new (accept the token), `false` when it was already present (a replay).
    /// - Throws: ``TokenError`` `replay_store_unavailable` when the cache cannot decide and policy says refuse,
    ///   for example a full in-memory cache or an unreachable Redis in `reject` mode. Never `replayed`: that code
    ///   means only that the token was presented before, and callers branch on it.
    func insertIfAbsent(_ entry: ReplayEntry, now: Int64) async throws(TokenError) -> Bool

    /// Holds `entry` for `hold` seconds (at most until `entry.expiresAt`) if nobody holds or committed it, as of
    /// `now`: for a delivery that runs a handler before it is done (``ReplayReservation``). Exactly one of several
    /// concurrent callers gets ``ReplayReservation/Outcome/reserved(_:)``.
    /// - Throws: ``TokenError`` `replay_store_unavailable` when the cache cannot decide.
    func reserve(_ entry: ReplayEntry, hold: Int64, now: Int64) async throws(TokenError) -> ReplayReservation.Outcome

    /// Keeps a reserved entry for its full lifetime (`entry.expiresAt`), if `reservation` still holds it; a later
    /// reservation of it finds it ``ReplayReservation/Outcome/committed``.
    /// - Throws: ``TokenError`` `replay_store_unavailable` when the cache cannot answer.
    func commit(_ reservation: ReplayReservation, now: Int64) async throws(TokenError)

    /// Forgets a reserved entry, if `reservation` still holds it, so that the next delivery may reserve it.
    /// - Throws: ``TokenError`` `replay_store_unavailable` when the cache cannot answer (the hold then ends by itself).
    func release(_ reservation: ReplayReservation) async throws(TokenError)
}

extension ReplayCache {
    /// Refuses: this cache keeps no reservations. ``MemoryReplayCache`` and `RedisReplayCache` keep them.
    public func reserve(_ entry: ReplayEntry, hold: Int64, now: Int64) async throws(TokenError) -> ReplayReservation.Outcome {
        throw ReplayReservation.unsupported
    }

    /// Refuses: this cache keeps no reservations.
    public func commit(_ reservation: ReplayReservation, now: Int64) async throws(TokenError) {
        throw ReplayReservation.unsupported
    }

    /// Refuses: this cache keeps no reservations.
    public func release(_ reservation: ReplayReservation) async throws(TokenError) {
        throw ReplayReservation.unsupported
    }
}

/// A delivery's claim on a replay entry while its handler runs (DESIGN §6): a Sign in with Apple notification is
/// reserved with a short hold, then committed to its full lifetime when the handler returned, or released when the
/// handler threw, so that the sender's retry runs the handler again. A hold whose owner died expires by itself.
///
/// ```swift
/// switch try await cache.reserve(entry, hold: 300, now: now) {
/// case .reserved(let reservation):
///     do { try await handle(event) } catch { try? await cache.release(reservation); throw error }
///     try await cache.commit(reservation, now: now)
/// case .committed: break          // handled before: acknowledge
/// case .held: answer503()         // another delivery is running its handler, and may still fail
/// }
/// ```
public struct ReplayReservation: Sendable, Hashable {
    /// What ``ReplayCache/reserve(_:hold:now:)`` found.
    public enum Outcome: Sendable, Hashable {
        /// The entry was free and is now held by this reservation until it commits, releases, or the hold ends.
        case reserved(ReplayReservation)
        /// The entry was committed before: the delivery was handled.
        case committed
        /// Another delivery holds the entry: its handler is running (or its owner died and the hold has not ended).
        case held
    }

    /// The entry reserved.
    public let entry: ReplayEntry
    /// A random value naming this reservation's holder, so that a late commit or release never touches a hold
    /// that ended and was taken by another delivery.
    public let owner: UInt64

    /// A reservation of `entry` by `owner` (a random value: ``ReplayReservation/newOwner()``).
    public init(entry: ReplayEntry, owner: UInt64) {
        self.entry = entry
        self.owner = owner
    }

    /// A fresh random owner, never 0.
    public static func newOwner() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next(upperBound: UInt64.max) + 1
    }

    static var unsupported: TokenError {
        TokenError(.replayStoreUnavailable, "the replay store could not answer: this replay cache keeps no reservations, which a notification delivery needs; use MemoryReplayCache or RedisReplayCache")
    }
}

/// A replay cache that answers without suspending, for synchronous (batch) verification.
public protocol SynchronousReplayCache: ReplayCache {
    /// ``ReplayCache/insertIfAbsent(_:now:)`` without suspending: true when `entry` was not there and is now.
    func insertIfAbsentNow(_ entry: ReplayEntry, now: Int64) throws(TokenError) -> Bool
}

extension SynchronousReplayCache {
    public func insertIfAbsent(_ entry: ReplayEntry, now: Int64) async throws(TokenError) -> Bool {
        try insertIfAbsentNow(entry, now: now)
    }
}
