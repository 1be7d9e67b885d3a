/// The types of Sign in with Apple's own claims, when present.
///
/// `email_verified`, `is_private_email` and `nonce_supported` are booleans, or in tokens issued before about
/// 2022 the strings `"true"` / `"false"`; any other value is refused. `real_user_status` is 0 (unsupported),
/// 1 (unknown) or 2 (likely real). `email` is a string.
public struct AppleClaimsRule: ClaimRule, Equatable {
    public init() {}

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        // Each key named on its own rather than looped over an array of keys (no copies of the keys per token).
        try AppleClaimsRule.checkFlexibleBool(claims, ClaimKey.emailVerified)
        try AppleClaimsRule.checkFlexibleBool(claims, ClaimKey.isPrivateEmail)
        try AppleClaimsRule.checkFlexibleBool(claims, ClaimKey.nonceSupported)
        if let status = claims[ClaimKey.realUserStatus] {
            guard let value = status.int64, (0...2).contains(value) else {
                throw TokenError(.invalidClaim, claim: "real_user_status",
                                 "the \"real_user_status\" claim must be 0, 1 or 2, not \(Quoted.value(status))")
            }
        }
        if let kind = claims.kind(of: ClaimKey.email), kind != .string {
            throw TokenError(.invalidClaim, claim: "email", "the \"email\" claim must be a string, not a \(kind)")
        }
    }

    private static func checkFlexibleBool(_ claims: JSONObject, _ key: JSONKey) throws(TokenError) {
        if let value = claims[key], AppleClaims.flexibleBool(value) == nil {
            let name = key.name
            throw TokenError(.invalidClaim, claim: name,
                             "the \"\(name)\" claim must be true, false, \"true\" or \"false\", not \(Quoted.value(value))")
        }
    }
}
