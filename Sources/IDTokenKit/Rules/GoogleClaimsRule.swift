/// The types of Google's own claims, when present: `email_verified` a boolean (or, in older tokens, the strings
/// `"true"`/`"false"`, read as Sign in with Apple's are), `email` and `hd` strings.
public struct GoogleClaimsRule: ClaimRule, Equatable {
    /// The rule; it has no options.
    public init() {}

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        try AppleClaimsRule.checkFlexibleBool(claims, ClaimKey.emailVerified)
        for key in [ClaimKey.email, GoogleClaimsRule.hostedDomain] {
            if let kind = claims.kind(of: key), kind != .string {
                throw TokenError(.invalidClaim, claim: key.name, "the \"\(key.name)\" claim must be a string, not a \(kind)")
            }
        }
    }

    static let hostedDomain = JSONKey("hd")
}
