extension Profile {
    /// Amazon Cognito user pool ID tokens: `issuer` is the pool's, `https://cognito-idp.REGION.amazonaws.com/POOL_ID`,
    /// and `clientIDs` the app clients whose tokens are accepted.
    ///
    /// RS256 with `kid`, under the pool's keys (`<issuer>/.well-known/jwks.json`); `iss` exactly `issuer`; `aud` one
    /// of `clientIDs`; `token_use` must be `id` — a Cognito access token (`token_use` `access`, no `aud`) is not an
    /// ID token; `sub` non-empty; `iat`, `exp` required.
    public static func cognito(issuer: String, clientIDs: [String]) -> Profile {
        Profile(
            provider: .cognito,
            issuers: [issuer],
            algorithms: [.rs256],
            audience: .oneOf(clientIDs, allowsArray: false),
            requiresKeyID: true,
            time: TimeRules(requiresIssuedAt: true),
            rules: [SubjectRule(),
                    AllowedValuesRule("token_use", oneOf: ["id"], required: true,
                                      hint: "Cognito access tokens (\"token_use\": \"access\") are not ID tokens; send the ID token")],
            nonceMode: .exact,
            keysURL: issuer + "/.well-known/jwks.json",
            audienceHint: "The audience is the user pool's app client ID. A Cognito access token has none (it names its client in \"client_id\", with \"token_use\": \"access\"): send the ID token",
            issuerHint: "Only tokens of the configured user pool are accepted")
    }

    /// Whether `issuer` has the shape of a Cognito user pool's: `https://cognito-idp.REGION.amazonaws.com/POOL_ID`.
    static func isCognitoIssuer(_ issuer: String) -> Bool {
        let prefix = "https://cognito-idp.", domain = ".amazonaws.com/"
        guard issuer.hasPrefix(prefix), let range = issuer.range(of: domain) else { return false }
        let region = issuer[issuer.index(issuer.startIndex, offsetBy: prefix.count)..<range.lowerBound]
        let pool = issuer[range.upperBound...]
        return !region.isEmpty && !region.contains("/") && !pool.isEmpty && !pool.contains("/")
    }
}

extension ProviderDefinition {
    static let cognito = ProviderDefinition(
        .cognito, tokenName: "Cognito ID token", summary: "Amazon Cognito user pool ID tokens",
        needs: [audience("the app client ID"),
                (.issuers, "the user pool's issuer (--issuer, \"issuers\"): https://cognito-idp.REGION.amazonaws.com/POOL_ID")],
        make: { options, _ throws(ConfigurationError) in
            guard options.issuers.count == 1, let issuer = options.issuers.first, Profile.isCognitoIssuer(issuer) else {
                throw ConfigurationError("a cognito profile needs one user pool issuer, https://cognito-idp.REGION.amazonaws.com/POOL_ID (--issuer, \"issuers\"), not \(options.issuers.map { "\"\($0)\"" }.joined(separator: ", "))")
            }
            return .cognito(issuer: issuer, clientIDs: options.audiences)
        },
        recognizes: { issuer, _ in Profile.isCognitoIssuer(issuer) },
        suggests: { issuer, audience, _ in ["--issuer", issuer] + (audience.first.map { ["--audience", $0] } ?? []) })
}
