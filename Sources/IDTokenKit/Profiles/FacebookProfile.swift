extension Profile {
    /// Facebook's Limited Login JWKS.
    public static let facebookJWKSURL = "https://limited.facebook.com/.well-known/oauth/openid/jwks/"
    /// The issuer of Facebook Limited Login tokens.
    public static let facebookIssuer = "https://www.facebook.com"

    /// Facebook Limited Login tokens for one Facebook app.
    public static func facebook(appID: String, extraIssuers: [String] = []) -> Profile {
        facebook(appIDs: [appID], extraIssuers: extraIssuers)
    }

    /// Facebook Limited Login tokens for the App IDs of one app — typically a production and a test App ID, both
    /// legitimate signers-in.
    ///
    /// RS256 only; `iss` is `https://www.facebook.com` (plus `extraIssuers`); `aud` is one of the App IDs, as a
    /// string; `sub` and `jti` are non-empty strings; `iat` and `exp` required. The nonce is the SHA-256 hex of
    /// the raw nonce by default (the Firebase flow); use ``Nonce/exact(_:)`` when the app sends the nonce as is.
    public static func facebook(appIDs: [String], extraIssuers: [String] = []) -> Profile {
        Profile(
            provider: .facebook,
            issuers: [facebookIssuer] + extraIssuers,
            algorithms: [.rs256],
            audience: .oneOf(appIDs, allowsArray: false),
            requiresKeyID: true,
            time: TimeRules(requiresIssuedAt: true),
            rules: [SubjectRule(), RequiredStringRule("jti")],
            nonceMode: .sha256Hex,
            keysURL: facebookJWKSURL,
            audienceHint: "The audience is the Facebook App ID the app signed in with",
            issuerHint: "Only tokens issued by Facebook Limited Login are accepted (add other issuers explicitly if you need them)")
    }
}

extension ProviderDefinition {
    static let facebook = ProviderDefinition(
        .facebook, tokenName: "Facebook Limited Login token", summary: "Facebook Limited Login tokens",
        needs: [audience("the Facebook App ID; several are accepted, e.g. a production and a test App ID")],
        takes: [.issuers],
        make: { options, _ in .facebook(appIDs: options.audiences, extraIssuers: options.issuers) },
        recognizes: { issuer, _ in issuer == Profile.facebookIssuer || issuer == "https://limited.facebook.com" },
        suggests: { issuer, audience, _ in
            (audience.first.map { ["--audience", $0] } ?? []) + (issuer != Profile.facebookIssuer ? ["--issuer", issuer] : [])
        })
}
