/// One check on a token's claims, run after the signature, issuer, audience and time checks.
///
/// Profiles hold a short list of rules (the subject's shape, Firebase's `firebase` claim, Apple's boolean
/// strings, Facebook's `jti`…), so that a provider is data plus a checklist rather than a fork of the
/// verifier. Rules are immutable values, shared by every verification.
public protocol ClaimRule: Sendable {
    /// Throws a ``TokenError`` when `claims` break the rule.
    func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError)

    /// Whether the verdict depends on the claims alone: the same claims pass or fail at any time, whatever
    /// happens outside the token. A ``VerifiedTokenCache`` skips such rules when it serves a token it verified
    /// before, and runs every other rule (a revocation list, anything that reads `context.now`) again.
    /// Defaults to `false`, which is always safe.
    var dependsOnlyOnClaims: Bool { get }
}

extension ClaimRule {
    public var dependsOnlyOnClaims: Bool { false }

    /// This rule in an existential container of its own (a copy of the value, boxed anew): see
    /// ``Profile/replica()``.
    var inContainerOfItsOwn: any ClaimRule { self }
}

/// What a rule may need besides the claims.
public struct ClaimContext: Sendable {
    /// The time of verification, Unix seconds.
    public let now: Double
    /// The leeway in seconds.
    public let leeway: Double
    /// What the token is called in messages ("Firebase ID token").
    public let tokenName: String
}
