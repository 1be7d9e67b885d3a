/// What a replay cache remembers about one accepted token.
public struct ReplayEntry: Sendable, Hashable {
    /// The token's issuer (`iss`).
    public let issuer: String
    /// SHA-256 of the token's signature segment (the base64url text as received).
    ///
    /// Whoever builds the entry must make this digest the same for every acceptable form of one token: an
    /// ECDSA signature `(r, s)` also verifies as `(r, n − s)`, so for ES256 the digest must be taken over a
    /// canonical form (low `s`) — or over the signing input — or one token could be accepted twice.
    public let signatureDigest: [UInt8]
    /// Unix time, in seconds, after which the entry may be forgotten: the token's `exp` plus the leeway.
    public let expiresAt: Int64

    public init(issuer: String, signatureDigest: [UInt8], expiresAt: Int64) {
        self.issuer = issuer
        self.signatureDigest = signatureDigest
        self.expiresAt = expiresAt
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
    /// - Throws: ``TokenError`` (`replayed` when the cache cannot take the entry and policy says refuse,
    ///   for example a full in-memory cache or an unreachable Redis in `reject` mode).
    func insertIfAbsent(_ entry: ReplayEntry, now: Int64) async throws(TokenError) -> Bool
}

/// A replay cache that answers without suspending, for synchronous (batch) verification.
public protocol SynchronousReplayCache: ReplayCache {
    func insertIfAbsentNow(_ entry: ReplayEntry, now: Int64) throws(TokenError) -> Bool
}

extension SynchronousReplayCache {
    public func insertIfAbsent(_ entry: ReplayEntry, now: Int64) async throws(TokenError) -> Bool {
        try insertIfAbsentNow(entry, now: now)
    }
}
