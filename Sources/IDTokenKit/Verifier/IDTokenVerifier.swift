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
/// to refresh once. `verify(_:keys:now:nonce:)` checks against a fixed key-set snapshot, for batch work.
///
/// With `cache:`, tokens verified before are answered from a ``VerifiedTokenCache`` (times, key, nonce and
/// revocation still checked at `now`), unless a replay cache is set.
public struct IDTokenVerifier: Sendable {
    /// What the verifier accepts.
    public let profile: Profile
    /// Where the verifier's keys come from.
    public let keySource: any KeySource
    /// Consulted last, when set: each token is accepted once.
    public private(set) var replayCache: (any ReplayCache)? {
        didSet { consultsReplayCache = replayCache != nil }
    }
    private var synchronousReplayCache: (any SynchronousReplayCache)?
    /// Whether ``replayCache`` is set: read on every token without copying the existential to test it.
    private var consultsReplayCache: Bool
    /// The tokens this verifier accepted before, when it was made with `cache:` and no replay cache.
    public let verifiedTokenCache: VerifiedTokenCache?
    private let leeway: Double
    /// `profile.algorithms` as a mask: checked on every token without hashing.
    private let allowedAlgorithms: JWSAlgorithmMask
    /// The key set of a ``StaticKeySource``, read without a call through the protocol: it never changes.
    private let fixedKeys: JWKSet?

    /// A verifier for `profile` with keys from `keys`.
    /// - Throws: ``ConfigurationError`` when the profile cannot be used (no audience, leeway out of range…).
    /// - Parameters:
    ///   - profile: what the verifier accepts.
    ///   - keys: where its keys come from.
    ///   - replayCache: where accepted tokens are recorded, so that each is accepted once (none by default).
    ///   - cache: keep up to this many verified tokens, to answer them again without the signature
    ///     check; ignored with a replay cache, which must see every presentation.
    public init(profile: Profile, keys: any KeySource, replayCache: (any ReplayCache)? = nil,
                cache: VerifiedTokenCache.Configuration? = nil) throws(ConfigurationError) {
        try profile.validate()
        self.profile = profile
        self.keySource = keys
        self.replayCache = replayCache
        self.consultsReplayCache = replayCache != nil
        self.synchronousReplayCache = replayCache as? any SynchronousReplayCache
        self.leeway = Double(profile.leeway.seconds)
        self.allowedAlgorithms = JWSAlgorithmMask(profile.algorithms)
        self.fixedKeys = (keys as? StaticKeySource)?.keySet
        self.verifiedTokenCache = replayCache == nil ? cache.map { VerifiedTokenCache($0, profile: profile) } : nil
    }

    /// A verifier with a fixed key set.
    public init(profile: Profile, keys: JWKSet, replayCache: (any ReplayCache)? = nil,
                cache: VerifiedTokenCache.Configuration? = nil) throws(ConfigurationError) {
        try self.init(profile: profile, keys: StaticKeySource(keys), replayCache: replayCache, cache: cache)
    }

    /// A verifier that judges every token as this one does, over a profile and a fixed key set in objects of its
    /// own (``Profile/replica()``, ``JWKSet/replica()``), for a thread that verifies apart from the others (an
    /// audit's worker): every verification retains and releases the profile's and the key set's objects, and when
    /// threads on several cores share them, each of those reference counts moves a cache line between cores. The
    /// key source of a verifier without a fixed set, the replay cache and the verified-token cache are the same
    /// objects (a replica's keys are not the original's, so that cache treats what the original verified as
    /// unverified).
    package func replica() -> IDTokenVerifier { IDTokenVerifier(replicating: self) }

    private init(replicating other: IDTokenVerifier) {
        profile = other.profile.replica()
        if let fixed = other.fixedKeys {
            let keys = fixed.replica()
            keySource = StaticKeySource(keys)
            fixedKeys = keys
        } else {
            keySource = other.keySource
            fixedKeys = nil
        }
        replayCache = other.replayCache
        synchronousReplayCache = other.synchronousReplayCache
        consultsReplayCache = other.consultsReplayCache
        verifiedTokenCache = other.verifiedTokenCache
        leeway = other.leeway
        allowedAlgorithms = other.allowedAlgorithms
    }

    /// This verifier without its replay cache, for a delivery that reserves its token in that cache itself
    /// (``MultiProfileVerifier/deliverAppleNotification(body:now:hold:handler:)``) instead of consuming it.
    package var withoutReplayCache: IDTokenVerifier {
        var copy = self
        copy.replayCache = nil
        copy.synchronousReplayCache = nil
        return copy
    }

    // MARK: Verifying

    /// Verifies `token` as of `now`, fetching keys from the key source only when it lacks the token's key.
    ///
    /// - Parameters:
    ///   - token: the compact JWS as received (without `Bearer `).
    ///   - now: the time of verification.
    ///   - nonce: the nonce the token must carry, if the sign-in flow used one; one without a mode is
    ///     compared as the profile's ``Profile/nonceMode`` says.
    /// - Returns: the verified token.
    /// - Throws: ``TokenError``; `keys_unavailable` when the key source has no usable keys.
    public func verify(_ token: String, now: Date, nonce: Nonce? = nil) async throws(TokenError) -> VerifiedToken {
        let nonce = nonce?.resolved(profile.nonceMode)
        let seconds = now.timeIntervalSince1970
        if let hit = cachedToken(token, keys: nil, now: seconds, nonce: nonce) { return hit }
        let jws = try CompactJWS(token, limits: profile.limits)
        return try await step(jws, now: seconds, nonce: nonce, claims: nil, reportsRefusals: false).value().verification.get()
    }

    /// Verifies `token` as of `now` against the key-set snapshot `keys`, without suspending: for batch work
    /// such as audits. A configured replay cache must be a ``SynchronousReplayCache``. The same pipeline as
    /// `evaluate(_:keys:at:nonce:)`, with the refusal thrown.
    public func verify(_ token: String, keys: JWKSet, now: Date, nonce: Nonce? = nil) throws(TokenError) -> VerifiedToken {
        let nonce = nonce?.resolved(profile.nonceMode)
        let seconds = now.timeIntervalSince1970
        // A cache hit is returned as it is, not wrapped in a Verification and unwrapped again: a hit costs about
        // 2,000 instructions, so the wrapping would show.
        if let hit = cachedToken(token, keys: keys, now: seconds, nonce: nonce) { return hit }
        let jws = try CompactJWS(token, limits: profile.limits)
        return try decided(jws, keys: keys, now: seconds, nonce: nonce, reportsRefusals: false).get()
    }

    /// Verifies a token the caller has already split with `CompactJWS(token, limits: profile.limits)` (pipeline
    /// steps 1–2), as of `now` against `keys`: for batch work that reads a token's shape first, such as an audit
    /// routing tokens to profiles by issuer, so that the token is not split twice. Everything after the split is
    /// checked here as when verifying the token text.
    public func verify(_ jws: CompactJWS, keys: JWKSet, now: Date, nonce: Nonce? = nil) throws(TokenError) -> VerifiedToken {
        try evaluation(jws, keys: keys, now: now.timeIntervalSince1970, nonce: nonce?.resolved(profile.nonceMode),
                       reportsRefusals: false).get()
    }

    /// The verified-token cache's answer for `token` (nil without a cache, or when the token must be verified in
    /// full): the one place the verifier and the verifiers over it (``MultiProfileVerifier``) ask it.
    /// - Parameters:
    ///   - keys: the key-set snapshot the token would be verified against; nil: the key source's current set.
    ///   - nonce: resolved (``Nonce/resolved(_:)``).
    @inline(__always)
    package func cachedToken(_ token: String, keys: JWKSet?, now: Double, nonce: Nonce?) -> VerifiedToken? {
        Self.cachedToken(token, in: verifiedTokenCache, keys: keys, keySource: keySource, now: now, nonce: nonce)
    }

    /// ``cachedToken(_:keys:now:nonce:)`` from a verifier's cache and key source held apart from the verifier (a
    /// route of ``MultiProfileVerifier`` keeps them, so that a lookup does not copy the whole verifier).
    @inline(__always)
    package static func cachedToken<Token: TokenText>(_ token: Token, in cache: VerifiedTokenCache?, keys: JWKSet?,
                                                      keySource: any KeySource, now: Double, nonce: Nonce?) -> VerifiedToken? {
        guard let cache else { return nil }
        if let keys { return cache.verifiedToken(token, keys: keys, now: now, nonce: nonce) }
        return cache.verifiedToken(token, keySource: keySource, now: now, nonce: nonce)
    }

    // MARK: The way through the key source and the replay cache

    /// The outcome of the pipeline after the split: the verdict and the time window the time check computed (nil
    /// when the token was refused before it).
    package struct Outcome: Sendable {
        package var verification: Verification
        package var window: TimeWindow?
    }

    /// How far a token got without waiting: decided, or waiting for the key source (no usable set yet, or a `kid`
    /// the set lacks) or for an asynchronous replay cache.
    package typealias Step = VerificationStep<Outcome>

    /// The one orchestration of DESIGN §14 for a split token, which every way in takes: the key set (`keys` when
    /// given, a snapshot that is never refreshed; else the key source's current set, with one refresh through the
    /// source when it has none or lacks the token's `kid`, which the source limits by its cooldown); the key; the
    /// signature; the claims; then the replay cache, last. Answers at once when nothing has to be waited for.
    /// - Parameters:
    ///   - keys: the key-set snapshot to verify against; nil: the key source's.
    ///   - nonce: resolved (``Nonce/resolved(_:)``).
    ///   - claims: the payload, when routing has read it from this split already (it is not read again).
    package func step(_ jws: CompactJWS, keys: JWKSet? = nil, now: Double, nonce: Nonce?, claims: JSONObject?,
                      reportsRefusals: Bool) -> Step {
        switch prepare(jws, keys: keys, now: now, nonce: nonce, claims: claims, reportsRefusals: reportsRefusals) {
        case .decided(let step): return step
        case .signature(let pending): return finish(pending, signatureValid: pending.jws.verifySignature(with: pending.key))
        }
    }

    /// A split token whose key is chosen, waiting only for its signature's verdict: from one libcrypto call
    /// (``step(_:keys:now:nonce:claims:reportsRefusals:)``) or from a batch of them (``SignatureBatch``).
    package struct PendingSignature: Sendable {
        package let jws: CompactJWS
        /// The key the header chose, checked against the profile's algorithms.
        package let key: PublicKey
        let now: Double
        let nonce: Nonce?
        /// The payload, when routing read it from this split already (it is not read again).
        let claims: JSONObject?
        let reportsRefusals: Bool
    }

    /// Where ``prepare(_:keys:now:nonce:claims:reportsRefusals:)`` left a token: decided without its signature
    /// (refused before it, or waiting for the key source), or with its signature all that is left to check before
    /// the claims (``finish(_:signatureValid:)``).
    package typealias Prepared = PreparedToken<PendingSignature, Outcome>

    /// The way up to the signature: the key set (`keys`, or the source's, or the wait for one), the header's
    /// algorithm and the key by `kid` (or, with the source's set, the wait for a refresh when the set lacks it).
    /// The split token is moved on into the pending signature (a copy would retain and release its references).
    package func prepare(_ jws: consuming CompactJWS, keys given: JWKSet? = nil, now: Double, nonce: Nonce?, claims: JSONObject?,
                         reportsRefusals: Bool) -> Prepared {
        guard let keys = given ?? fixedKeys ?? keySource.currentKeys() else {
            let unavailable = TokenError(.keysUnavailable, "the key source has no usable key set yet, and a synchronous verification does not fetch one")
            return .decided(.waiting(without: Outcome(verification: .refused(unavailable, signatureVerified: false, header: jws.header, claims: claims))) { [self, jws = copy jws] in await self.fetched(jws, refreshingFor: nil, now: now, nonce: nonce, claims: claims,
                                                          reportsRefusals: reportsRefusals) })
        }
        let key: PublicKey
        do { key = try selectKey(jws, keys) } catch {
            let outcome = Outcome(verification: unverified(error, jws, reportsRefusals, claims))
            // Only a kid the set lacks is worth a refresh; a missing kid stays missing, and a fixed set or a given
            // snapshot stays as it is.
            if given == nil, fixedKeys == nil, error.code == .unknownKey, let kid = jws.header.kid, keys.key(kid: kid) == nil {
                return .decided(.waiting(without: outcome) { [self, jws = copy jws] in await self.fetched(jws, refreshingFor: kid, now: now, nonce: nonce, claims: claims,
                                                              reportsRefusals: reportsRefusals) })
            }
            return .decided(.done(outcome))
        }
        return .signature(PendingSignature(jws: jws, key: key, now: now, nonce: nonce, claims: claims, reportsRefusals: reportsRefusals))
    }

    /// The way after the signature: the claims, then the replay cache, last.
    /// - Parameter signatureValid: whether the signature verifies with `pending.key` (libcrypto's answer, or the
    ///   batch kernel's exact encoding; never a refusal libcrypto has not confirmed).
    package func finish(_ pending: PendingSignature, signatureValid: Bool) -> Step {
        let outcome = signed(pending.jws, key: pending.key, valid: signatureValid, now: pending.now, nonce: pending.nonce,
                             claims: pending.claims, reportsRefusals: pending.reportsRefusals)
        // Without a replay cache the outcome is the answer (moved into the step, not passed through replayStep).
        guard consultsReplayCache else { return .done(outcome) }
        return replayStep(outcome, pending.jws, now: pending.now)
    }

    /// The pipeline again after asking the key source (`keys_unavailable` when it has no usable set).
    private func fetched(_ jws: CompactJWS, refreshingFor kid: String?, now: Double, nonce: Nonce?, claims: JSONObject?,
                         reportsRefusals: Bool) async -> Outcome {
        let keys: JWKSet
        do { keys = try await keySource.keys(refreshingFor: kid) } catch {
            return Outcome(verification: .refused(error, signatureVerified: false, header: jws.header, claims: claims))
        }
        return await step(jws, keys: keys, now: now, nonce: nonce, claims: claims, reportsRefusals: reportsRefusals).value()
    }

    /// The replay cache, last, for an accepted token: answered at once by a synchronous cache.
    private func replayStep(_ outcome: Outcome, _ jws: CompactJWS, now: Double) -> Step {
        guard let replayCache, case .accepted(let verified) = outcome.verification else { return .done(outcome) }
        let entry = replayEntry(jws, verified, window: outcome.window)
        let at = Int64(now.rounded(.down))
        let refused: @Sendable (TokenError) -> Outcome = { error in
            Outcome(verification: .refused(error, signatureVerified: true, header: jws.header, claims: verified.claims.object),
                    window: outcome.window)
        }
        if let synchronousReplayCache {
            do throws(TokenError) {
                guard try synchronousReplayCache.insertIfAbsentNow(entry, now: at) else { return .done(refused(replayed(entry))) }
            } catch {
                return .done(refused(error))
            }
            return .done(outcome)
        }
        let synchronous = TokenError(.replayStoreUnavailable, "the replay store could not answer: the configured replay cache cannot answer synchronously; use the asynchronous verify, which can wait for it")
        return .waiting(without: refused(synchronous)) { [self] in
            do throws(TokenError) {
                guard try await replayCache.insertIfAbsent(entry, now: at) else { return refused(replayed(entry)) }
            } catch {
                return refused(error)
            }
            return outcome
        }
    }

    // MARK: Evaluating

    /// Verifies `token` as of `at` against the key-set snapshot `keys` and returns the outcome as a value: the
    /// verified token, or the refusal with how far the token got (whether its signature verified), its header
    /// and what its payload says (unverified unless the signature verified), for reports. Nothing is thrown and
    /// nothing suspends; a configured replay cache must be a ``SynchronousReplayCache``.
    public func evaluate(_ token: String, keys: JWKSet, at: Date, nonce: Nonce? = nil) -> Verification {
        evaluation(token, keys: keys, now: at.timeIntervalSince1970, nonce: nonce?.resolved(profile.nonceMode), reportsRefusals: true)
    }

    /// ``evaluate(_:keys:at:nonce:)`` for a token the caller has already split with
    /// `CompactJWS(token, limits: profile.limits)`, so that it is not split twice.
    public func evaluate(_ jws: CompactJWS, keys: JWKSet, at: Date, nonce: Nonce? = nil) -> Verification {
        evaluate(jws, keys: keys, at: at, nonce: nonce, readingRefusedClaims: true)
    }

    /// ``evaluate(_:keys:at:nonce:)`` for a split token, reading the payload of a token refused before its
    /// signature verified only when `readingRefusedClaims` (an audit that has read it to route the token
    /// already reports its own reading).
    package func evaluate(_ jws: CompactJWS, keys: JWKSet, at: Date, nonce: Nonce?, readingRefusedClaims: Bool) -> Verification {
        evaluation(jws, keys: keys, now: at.timeIntervalSince1970, nonce: nonce?.resolved(profile.nonceMode),
                   reportsRefusals: readingRefusedClaims)
    }

    /// The synchronous way for token text: the verified-token cache, the split, then the orchestration to its end.
    /// `nonce` is resolved.
    @inline(__always)
    private func evaluation(_ token: String, keys: JWKSet, now: Double, nonce: Nonce?, reportsRefusals: Bool) -> Verification {
        if let hit = cachedToken(token, keys: keys, now: now, nonce: nonce) { return .accepted(hit) }
        let jws: CompactJWS
        do { jws = try CompactJWS(token, limits: profile.limits) } catch {
            return .refused(error, signatureVerified: false, header: nil, claims: nil)
        }
        return decided(jws, keys: keys, now: now, nonce: nonce, reportsRefusals: reportsRefusals)
    }

    /// The same for a split token.
    @inline(__always)
    private func evaluation(_ jws: CompactJWS, keys: JWKSet, now: Double, nonce: Nonce?, reportsRefusals: Bool) -> Verification {
        if let hit = cachedToken(jws.token, keys: keys, now: now, nonce: nonce) { return .accepted(hit) }
        return decided(jws, keys: keys, now: now, nonce: nonce, reportsRefusals: reportsRefusals)
    }

    /// The orchestration's stages run to the end against the snapshot `keys`, without waiting (so without the
    /// in-flight values of ``prepare(_:keys:now:nonce:claims:reportsRefusals:)``, which a single verification
    /// does not need): the key, the signature, ``signed(_:key:valid:now:nonce:claims:reportsRefusals:)``, then
    /// ``replayStep(_:_:now:)``, where an asynchronous replay cache, which cannot answer here, is
    /// `replay_store_unavailable`.
    /// - Parameter reportsRefusals: read the payload of a token refused before its signature verified, for the report
    ///   (``Verification/refused(_:signatureVerified:header:claims:)``); the throwing callers drop it.
    @inline(__always)
    private func decided(_ jws: CompactJWS, keys: JWKSet, now: Double, nonce: Nonce?, reportsRefusals: Bool) -> Verification {
        let key: PublicKey
        do { key = try selectKey(jws, keys) } catch { return unverified(error, jws, reportsRefusals) }
        let outcome = signed(jws, key: key, valid: jws.verifySignature(with: key), now: now, nonce: nonce, claims: nil,
                             reportsRefusals: reportsRefusals)
        guard consultsReplayCache else { return outcome.verification }
        return replayStep(outcome, jws, now: now).now().verification
    }

    /// Steps 4–6 once the signature's verdict is known: the claims, the nonce and the verified-token cache (the
    /// replay cache comes after them, in ``replayStep(_:_:now:)``).
    private func signed(_ jws: CompactJWS, key: PublicKey, valid: Bool, now: Double, nonce: Nonce?, claims read: JSONObject?,
                        reportsRefusals: Bool) -> Outcome {
        guard valid else {
            return Outcome(verification: unverified(TokenError(.badSignature, "the signature does not verify with key \"\(key.kid ?? "(no kid)")\": the token was altered, or signed by someone else"),
                                                    jws, reportsRefusals, read))
        }
        let claims: JSONObject
        if let read { claims = read } else {
            do { claims = try jws.claims(maxDepth: profile.limits.maxDepth) } catch {
                return Outcome(verification: .refused(error, signatureVerified: true, header: jws.header, claims: nil))
            }
        }
        var window: TimeWindow?
        do throws(TokenError) {
            let verified = try check(claims, jws, key: key, now: now, nonce: nonce, window: &window)
            verifiedTokenCache?.store(jws.token, verified, key: key, window: window!, now: now)
            return Outcome(verification: .accepted(verified), window: window)
        } catch {
            return Outcome(verification: .refused(error, signatureVerified: true, header: jws.header, claims: claims), window: window)
        }
    }

    /// A refusal before the signature verified: the payload, when asked for, is what the token says (unverified).
    private func unverified(_ error: TokenError, _ jws: CompactJWS, _ reportsRefusals: Bool, _ read: JSONObject? = nil) -> Verification {
        .refused(error, signatureVerified: false, header: jws.header,
                 claims: read ?? (reportsRefusals ? try? jws.claims(maxDepth: profile.limits.maxDepth) : nil))
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

    /// Steps 5–6 before the replay cache, on the payload of a token whose signature verified: the profile's
    /// claim rules, then the nonce. Returns the token and its time window.
    private func check(_ claims: JSONObject, _ jws: CompactJWS, key: PublicKey, now: Double,
                       nonce: Nonce?, window: inout TimeWindow?) throws(TokenError) -> VerifiedToken {
        let tokenName = profile.tokenName
        try profile.checkType(jws.header.object)
        // Audience before issuer, as the Firebase Admin SDK does: a token from another project then reads as the
        // wrong audience, with the advice that goes with it.
        try profile.audience.check(claims, profile: profile)
        try profile.issuer.check(claims, profile: profile)
        window = try profile.time.check(claims, now: now, leeway: leeway, tokenName: tokenName)
        if !profile.rules.isEmpty {
            let context = ClaimContext(now: now, leeway: leeway, tokenName: tokenName)
            for rule in profile.rules { try rule.check(claims, context) }
        }
        if let nonce { try nonce.check(claims, tokenName: tokenName) }
        return VerifiedToken(provider: profile.provider, algorithm: key.algorithm, header: jws.header, claims: claims,
                             payloadRange: jws.payloadRange)
    }

    /// The replay-cache key of an accepted token (``ReplayEntry/init(signingInput:issuer:exp:leeway:)``), kept
    /// until the end of the window the time check computed: `exp`, or for a token without one (Apple's
    /// notifications) `iat` plus the profile's lifetime.
    private func replayEntry(_ jws: CompactJWS, _ verified: VerifiedToken, window: TimeWindow?) -> ReplayEntry {
        ReplayEntry(signingInput: jws.signingInput, issuer: verified.claims.object[ClaimKey.iss]?.string ?? "",
                    exp: window?.exp ?? verified.claims.expiresAt ?? 0, leeway: leeway)
    }
    private func replayed(_ entry: ReplayEntry) -> TokenError {
        TokenError(.replayed, "this \(profile.tokenName) was already presented (it is in the replay cache until \(UnixTime.iso8601(Double(entry.expiresAt)))); each token is accepted once. The client must get a new one")
    }
}
