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
        var window = TimeWindow(leeway: leeway)
        window.set(.exp, exp)
        self.init(issuer: issuer, tokenDigest: SHA256.hash(signingInput.utf8),
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
    /// - Throws: ``TokenError`` (`replayed` when the cache cannot take the entry and policy says refuse,
    ///   for example a full in-memory cache or an unreachable Redis in `reject` mode).
    func insertIfAbsent(_ entry: ReplayEntry, now: Int64) async throws(TokenError) -> Bool
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
