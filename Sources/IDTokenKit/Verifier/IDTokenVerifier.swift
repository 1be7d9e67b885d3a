import Foundation

/// Verifies ID tokens against one ``Profile`` with keys from a ``KeySource``.
///
/// ```swift
/// let verifier = try IDTokenVerifier(profile: .firebase(projectID: "my-app"), keys: source)
/// let token = try await verifier.verify(idToken, now: .now)
/// ```
///
/// The checks run in the order of DESIGN §2 — size and shape, header, key, signature, claims (audience,
/// issuer, times, subject, the profile's rules), nonce, and the replay cache last, so that a token that fails
/// anything else never takes a replay slot. Every failure is a ``TokenError`` with a stable code.
///
/// A verifier is an immutable value: share one across tasks and threads. The asynchronous ``verify(_:now:nonce:)``
/// does not suspend when the key set already has the token's key; for an unknown `kid` it asks the key source
/// to refresh once. ``verify(_:keys:now:nonce:)`` checks against a fixed key-set snapshot, for batch work.
///
/// With `cache:`, tokens verified before are answered from a ``VerifiedTokenCache`` (times, key, nonce and
/// revocation still checked at `now`), unless a replay cache is set.
public struct IDTokenVerifier: Sendable {
    public let profile: Profile
    public let keySource: any KeySource
    /// Consulted last, when set: each token is accepted once.
    public let replayCache: (any ReplayCache)?
    private let synchronousReplayCache: (any SynchronousReplayCache)?
    /// The tokens this verifier accepted before, when it was made with `cache:` and no replay cache.
    public let verifiedTokenCache: VerifiedTokenCache?
    private let leeway: Double
    /// `profile.algorithms` as a mask: checked on every token without hashing.
    private let allowedAlgorithms: JWSAlgorithmMask

    /// A verifier for `profile` with keys from `keys`.
    /// - Throws: ``ConfigurationError`` when the profile cannot be used (no audience, leeway out of range…).
    /// - Parameter cache: keep up to this many verified tokens, to answer them again without the signature
    ///   check; ignored with a replay cache, which must see every presentation.
    public init(profile: Profile, keys: any KeySource, replayCache: (any ReplayCache)? = nil,
                cache: VerifiedTokenCache.Configuration? = nil) throws(ConfigurationError) {
        try profile.validate()
        self.profile = profile
        self.keySource = keys
        self.replayCache = replayCache
        self.synchronousReplayCache = replayCache as? any SynchronousReplayCache
        self.leeway = Double(profile.leeway.seconds)
        self.allowedAlgorithms = JWSAlgorithmMask(profile.algorithms)
        self.verifiedTokenCache = replayCache == nil ? cache.map { VerifiedTokenCache($0, profile: profile) } : nil
    }

    /// A verifier with a fixed key set.
    public init(profile: Profile, keys: JWKSet, replayCache: (any ReplayCache)? = nil,
                cache: VerifiedTokenCache.Configuration? = nil) throws(ConfigurationError) {
        try self.init(profile: profile, keys: StaticKeySource(keys), replayCache: replayCache, cache: cache)
    }

    // MARK: Verifying

    /// Verifies `token` as of `now`, fetching keys from the key source only when it lacks the token's key.
    ///
    /// - Parameter nonce: the nonce the token must carry, if the sign-in flow used one.
    /// - Returns: the verified token.
    /// - Throws: ``TokenError``; `keys_unavailable` when the key source has no usable keys.
    public func verify(_ token: String, now: Date, nonce: Nonce? = nil) async throws(TokenError) -> VerifiedToken {
        if let hit = verifiedTokenCache?.verifiedToken(token, keySource: keySource, now: now.timeIntervalSince1970, nonce: nonce) {
            return hit
        }
        let jws = try CompactJWS(token, limits: profile.limits)
        var keys: JWKSet
        if let current = keySource.currentKeys() { keys = current } else { keys = try await keySource.keys(refreshingFor: nil) }
        let key: PublicKey
        do {
            key = try selectKey(jws, keys)
        } catch where error.code == .unknownKey {
            // Only a kid the snapshot lacks is worth a refresh; a missing kid stays missing.
            guard let kid = jws.header.kid else { throw error }
            keys = try await keySource.keys(refreshingFor: kid)
            key = try selectKey(jws, keys)
        }
        let (verified, exp) = try check(jws, key: key, now: now.timeIntervalSince1970, nonce: nonce)
        verifiedTokenCache?.store(token, verified, key: key, exp: exp, now: now.timeIntervalSince1970)
        if let replayCache {
            let entry = replayEntry(jws, issuer: verified.claims["iss"], exp: exp)
            guard try await replayCache.insertIfAbsent(entry, now: Int64(now.timeIntervalSince1970.rounded(.down))) else {
                throw replayed(entry)
            }
        }
        return verified
    }

    /// Verifies `token` as of `now` against the key-set snapshot `keys`, without suspending: for batch work
    /// such as audits. A configured replay cache must be a ``SynchronousReplayCache``.
    public func verify(_ token: String, keys: JWKSet, now: Date, nonce: Nonce? = nil) throws(TokenError) -> VerifiedToken {
        if let hit = verifiedTokenCache?.verifiedToken(token, keys: keys, now: now.timeIntervalSince1970, nonce: nonce) { return hit }
        return try verifyUncached(try CompactJWS(token, limits: profile.limits), keys: keys, now: now, nonce: nonce)
    }

    /// Verifies a token the caller has already split with `CompactJWS(token, limits: profile.limits)` (pipeline
    /// steps 1–2), as of `now` against `keys`: for batch work that reads a token's shape first, such as an audit
    /// routing tokens to profiles by issuer, so that the token is not split twice. Everything after the split is
    /// checked here as when verifying the token text.
    public func verify(_ jws: CompactJWS, keys: JWKSet, now: Date, nonce: Nonce? = nil) throws(TokenError) -> VerifiedToken {
        if let hit = verifiedTokenCache?.verifiedToken(jws.token, keys: keys, now: now.timeIntervalSince1970, nonce: nonce) { return hit }
        return try verifyUncached(jws, keys: keys, now: now, nonce: nonce)
    }

    private func verifyUncached(_ jws: CompactJWS, keys: JWKSet, now: Date, nonce: Nonce?) throws(TokenError) -> VerifiedToken {
        let key = try selectKey(jws, keys)
        let (verified, exp) = try check(jws, key: key, now: now.timeIntervalSince1970, nonce: nonce)
        verifiedTokenCache?.store(jws.token, verified, key: key, exp: exp, now: now.timeIntervalSince1970)
        if replayCache != nil {
            guard let cache = synchronousReplayCache else {
                throw TokenError(.replayed, "the configured replay cache cannot answer synchronously; use the asynchronous verify, which can wait for it")
            }
            let entry = replayEntry(jws, issuer: verified.claims["iss"], exp: exp)
            guard try cache.insertIfAbsentNow(entry, now: Int64(now.timeIntervalSince1970.rounded(.down))) else {
                throw replayed(entry)
            }
        }
        return verified
    }

    /// Pipeline steps 2–3: the header's algorithm against the profile, then the key by `kid`. When the kid names
    /// a key that the key set refused at load (an RSA key under 2048 bits…), the message says so.
    private func selectKey(_ jws: CompactJWS, _ keys: JWKSet) throws(TokenError) -> PublicKey {
        do {
            return try jws.selectKey(from: keys, allowed: allowedAlgorithms, requireKid: profile.requiresKeyID)
        } catch where error.code == .unknownKey {
            guard let kid = jws.header.kid, let refused = keys.rejected.first(where: { $0.kid == kid }) else { throw error }
            throw TokenError(.unknownKey, claim: "kid", "the key \"\(kid)\" was refused when the key set was loaded: \(refused.reason)")
        }
    }

    /// Steps 4–6 before the replay cache: signature, claims, nonce. Returns the token and its `exp`.
    private func check(_ jws: CompactJWS, key: PublicKey, now: Double, nonce: Nonce?) throws(TokenError) -> (VerifiedToken, Double) {
        guard jws.verifySignature(with: key) else {
            throw TokenError(.badSignature,
                             "the signature does not verify with key \"\(key.kid ?? "(no kid)")\": the token was altered, or signed by someone else")
        }
        let claims = try jws.claims(maxDepth: profile.limits.maxDepth)
        let tokenName = profile.provider.tokenName
        // Audience before issuer, as the Firebase Admin SDK does: a token from another project then reads as the
        // wrong audience, with the advice that goes with it.
        try profile.audience.check(claims, profile: profile)
        try profile.issuer.check(claims, profile: profile)
        let exp = try profile.time.check(claims, now: now, leeway: leeway, tokenName: tokenName)
        if !profile.rules.isEmpty {
            let context = ClaimContext(now: now, leeway: leeway, tokenName: tokenName)
            for rule in profile.rules { try rule.check(claims, context) }
        }
        if let nonce { try nonce.check(claims, tokenName: tokenName) }
        return (VerifiedToken(provider: profile.provider, algorithm: key.algorithm, header: jws.header, claims: claims), exp)
    }

    /// The replay-cache key: the issuer and the SHA-256 of the signed `header.payload` (not of the signature,
    /// which ECDSA lets anyone re-form; see ``ReplayEntry/tokenDigest``), kept until `exp` + leeway.
    private func replayEntry(_ jws: CompactJWS, issuer: JSONValue?, exp: Double) -> ReplayEntry {
        let digest = SHA256.hash(jws.signingInput.utf8)
        return ReplayEntry(issuer: issuer?.string ?? "", tokenDigest: digest, expiresAt: Int64((exp + leeway).rounded(.up)))
    }

    private func replayed(_ entry: ReplayEntry) -> TokenError {
        TokenError(.replayed, "this \(profile.provider.tokenName) was already presented (it is in the replay cache until \(UnixTime.iso8601(Double(entry.expiresAt)))); each token is accepted once. The client must get a new one")
    }
}
