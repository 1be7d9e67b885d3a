extension Profile {
    /// Apple's JWKS.
    public static let appleJWKSURL = "https://appleid.apple.com/auth/keys"
    /// The issuer of every Sign in with Apple identity token.
    public static let appleIssuer = "https://appleid.apple.com"

    /// Sign in with Apple identity tokens for your apps.
    ///
    /// RS256 only; `iss` is `https://appleid.apple.com`; `aud` is one of `clientIDs` (the bundle ID of a native
    /// app, or the Services ID of a web sign-in); `sub` non-empty; `iat` and `exp` required; `email_verified`,
    /// `is_private_email` and `nonce_supported` are booleans or `"true"`/`"false"`; `real_user_status` is 0–2.
    /// Nonces: Apple echoes what the app sent, which in the Firebase flow is the SHA-256 hex of the raw nonce.
    public static func apple(clientIDs: [String]) -> Profile {
        Profile(
            provider: .apple,
            issuers: [appleIssuer],
            algorithms: [.rs256],
            audience: .oneOf(clientIDs, allowsArray: false),
            requiresKeyID: true,
            time: TimeRules(requiresIssuedAt: true),
            rules: [SubjectRule(), AppleClaimsRule()],
            nonceMode: .sha256Hex,
            keysURL: appleJWKSURL,
            audienceHint: "The audience is the app's bundle ID (native sign-in) or the Services ID (web sign-in); add it to the accepted client IDs",
            issuerHint: "Only tokens issued by Sign in with Apple are accepted")
    }

    /// Sign in with Apple for one app.
    public static func apple(clientID: String) -> Profile { apple(clientIDs: [clientID]) }
}

extension ProviderDefinition {
    static let apple = ProviderDefinition(
        .apple, tokenName: "Sign in with Apple identity token", summary: "Sign in with Apple identity tokens",
        needs: [audience("the bundle ID or Services ID")],
        kindOfToken: { claims in !claims.contains(ClaimKey.events) },
        make: { options, _ in .apple(clientIDs: options.audiences) },
        recognizes: { issuer, _ in issuer == Profile.appleIssuer },
        suggests: { _, audience, _ in audience.first.map { ["--audience", $0] } ?? [] })
}
