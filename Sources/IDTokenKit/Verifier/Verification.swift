/// The outcome of verifying one token, as a value, in the manner of swift-certificates'
/// `PolicyEvaluationResult`: for batch callers (an audit, a report) that want to know how far a refused token
/// got and what it says about itself, not only that it was refused.
///
/// ```swift
/// switch verifier.evaluate(token, keys: keys, at: loggedAt) {
/// case .accepted(let verified): print("valid:", verified.subject)
/// case .refused(let error, let signatureVerified, _, let claims): print(error.code, signatureVerified, claims?["sub"] as Any)
/// }
/// ```
///
/// `IDTokenVerifier.evaluate(_:keys:at:nonce:)` gives one; the synchronous, throwing
/// `IDTokenVerifier.verify(_:keys:now:nonce:)` is the same pipeline with the refusal thrown (``get()``).
public enum Verification: Sendable {
    /// Every check passed.
    case accepted(VerifiedToken)
    /// A check refused the token.
    /// - `signatureVerified`: whether the signature was checked and verified before the refusal (a token refused
    ///   for its claims: `expired`, `wrong_audience`…); false when the refusal came before or at the signature.
    /// - `header`: the protected header, when the token could be split (nil for a token that is not a compact
    ///   JWS, or whose header the pipeline refused).
    /// - `claims`: the payload, when it is a JSON object — verified when `signatureVerified`, otherwise only what
    ///   the token says about itself, for reports. Nothing in it may be trusted then.
    case refused(TokenError, signatureVerified: Bool, header: JOSEHeader?, claims: JSONObject?)

    /// The verified token, when accepted.
    public var verifiedToken: VerifiedToken? {
        if case .accepted(let token) = self { return token }
        return nil
    }

    /// The refusal, when refused.
    public var error: TokenError? {
        if case .refused(let error, _, _, _) = self { return error }
        return nil
    }

    /// Whether the token was accepted.
    public var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }

    /// Whether the signature verified: always for an accepted token.
    public var signatureVerified: Bool {
        switch self {
        case .accepted: return true
        case .refused(_, let verified, _, _): return verified
        }
    }

    /// The verified token, or the refusal thrown.
    @inline(__always)
    public func get() throws(TokenError) -> VerifiedToken {
        switch self {
        case .accepted(let token): return token
        case .refused(let error, _, _, _): throw error
        }
    }
}
