@_exported import JOSE

/// Where a verifier gets its keys.
///
/// The verifier reads ``currentKeys`` on every token: it must return an immutable snapshot without waiting,
/// locking for long, or hopping to an actor, so that a request whose key is cached never waits on anything.
/// Only when there is no snapshot yet, or the token names a `kid` the snapshot lacks, does the verifier
/// `await` ``keys(refreshingFor:)``.
///
/// Implementations: ``StaticKeySource`` (a file, an archive, or keys built in memory; see ``KeySetFile`` and
/// ``KeyArchive``) and ``HTTPKeySource`` (fetched and cached); ``KeySourceResolver`` picks one for the
/// CLI's `--keys`.
public protocol KeySource: Sendable {
    /// The latest good key set, or nil when none is usable (not loaded yet, or, for a remote source, stale
    /// beyond its bound). Must not block, and never starts a fetch.
    func currentKeys() -> JWKSet?

    /// A key set to verify with, loading it if there is none yet.
    ///
    /// - Parameter unknownKid: the `kid` a token named that the current snapshot lacks, if that is why the
    ///   verifier is asking. A remote source refetches at most once per cooldown for such requests and
    ///   returns the current set otherwise; a static source returns its set unchanged.
    /// - Throws: ``TokenError`` with code `keys_unavailable` when there is no usable key set at all.
    func keys(refreshingFor unknownKid: String?) async throws(TokenError) -> JWKSet
}

/// A fixed key set: a JWKS, certificate map or archive read from a file or built in memory.
public struct StaticKeySource: KeySource {
    public let keySet: JWKSet

    public init(_ keySet: JWKSet) { self.keySet = keySet }

    public func currentKeys() -> JWKSet? { keySet }

    public func keys(refreshingFor unknownKid: String?) async throws(TokenError) -> JWKSet { keySet }
}
