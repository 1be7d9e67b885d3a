/// Where a verifier gets its keys.
///
/// The verifier reads ``currentKeys()`` on every token: it must return an immutable snapshot without waiting,
/// locking for long, or hopping to an actor, so that a request whose key is cached never waits on anything.
/// Only when there is no snapshot yet, or the token names a `kid` the snapshot lacks, does the verifier
/// `await` ``keys(refreshingFor:)``.
///
/// Implementations: ``StaticKeySource`` (a file, an archive, or keys built in memory; see ``KeySetFile`` and
/// ``KeyArchive``) and ``HTTPKeySource`` (fetched and cached); the command line picks one for its
/// `--keys`.
public protocol KeySource: Sendable {
    /// The latest good key set, or nil when none is usable (not loaded yet, or, for a remote source, stale
    /// beyond its bound). Must not block, and never starts a fetch.
    func currentKeys() -> JWKSet?

    /// Calls `body` with the current snapshot, lent rather than copied; nil, without calling `body`, when
    /// ``currentKeys()`` would be nil. Same rules: must not block.
    ///
    /// A verified-token cache asks this on every hit, a million times a second across threads; copying a
    /// `JWKSet` out of a shared source retains its buffers, and threads retaining the same buffers contend for
    /// their cache lines. The default copies from ``currentKeys()``; a source that can lend its snapshot should.
    func withCurrentKeys<Result>(_ body: (JWKSet) -> Result) -> Result?

    /// A key set to verify with, loading it if there is none yet.
    ///
    /// - Parameter unknownKid: the `kid` a token named that the current snapshot lacks, if that is why the
    ///   verifier is asking. A remote source refetches at most once per cooldown for such requests and
    ///   returns the current set otherwise; a static source returns its set unchanged.
    /// - Throws: ``TokenError`` with code `keys_unavailable` when there is no usable key set at all.
    func keys(refreshingFor unknownKid: String?) async throws(TokenError) -> JWKSet
}

extension KeySource {
    public func withCurrentKeys<Result>(_ body: (JWKSet) -> Result) -> Result? {
        guard let keys = currentKeys() else { return nil }
        return body(keys)
    }
}

/// A fixed key set: a JWKS, certificate map or archive read from a file or built in memory.
public struct StaticKeySource: KeySource {
    /// The keys.
    public let keySet: JWKSet

    /// A source that always answers with `keySet`.
    public init(_ keySet: JWKSet) { self.keySet = keySet }

    public func currentKeys() -> JWKSet? { keySet }

    public func withCurrentKeys<Result>(_ body: (JWKSet) -> Result) -> Result? { body(keySet) }

    public func keys(refreshingFor unknownKid: String?) async throws(TokenError) -> JWKSet { keySet }
}
