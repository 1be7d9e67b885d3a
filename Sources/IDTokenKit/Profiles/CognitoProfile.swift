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

    /// Amazon Cognito user pool access tokens: `issuer` is the pool's, and `clientIDs` the app clients whose tokens
    /// are accepted, which an access token names in `client_id` (it has no `aud`).
    ///
    /// RS256 with `kid`, under the pool's keys; `iss` exactly `issuer`; `client_id` one of `clientIDs`; `token_use`
    /// must be `access`; `sub` non-empty; `iat`, `exp` required. Beside a ``cognito(issuer:clientIDs:)`` profile of
    /// the same pool, each token goes to the profile of its `token_use`.
    public static func cognitoAccess(issuer: String, clientIDs: [String]) -> Profile {
        Profile(
            provider: .cognitoAccess,
            issuers: [issuer],
            algorithms: [.rs256],
            audience: AudienceRule(accepted: clientIDs, allowsArray: false, claim: "client_id"),
            requiresKeyID: true,
            time: TimeRules(requiresIssuedAt: true),
            rules: [SubjectRule(),
                    AllowedValuesRule("token_use", oneOf: ["access"], required: true,
                                      hint: "Cognito ID tokens (\"token_use\": \"id\") are verified by a cognito profile")],
            nonceMode: nil,
            keysURL: issuer + "/.well-known/jwks.json",
            audienceHint: "An access token names its app client in \"client_id\"; give the app client IDs as audiences",
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
        kindOfToken: { claims in !isAccessToken(claims) },
        make: { options, _ throws(ConfigurationError) in
            .cognito(issuer: try pool(options, provider: .cognito), clientIDs: options.audiences)
        },
        recognizes: { issuer, _ in Profile.isCognitoIssuer(issuer) },
        suggests: { issuer, audience, _ in ["--issuer", issuer] + (audience.first.map { ["--audience", $0] } ?? []) })

    static let cognitoAccess = ProviderDefinition(
        .cognitoAccess, tokenName: "Cognito access token",
        summary: "Amazon Cognito user pool access tokens (`token_use` `access`, the app client in `client_id`); beside a cognito profile of the same pool, each token goes to the profile of its `token_use`",
        needs: [audience("the app client ID, which access tokens name in client_id"),
                (.issuers, "the user pool's issuer (--issuer, \"issuers\"): https://cognito-idp.REGION.amazonaws.com/POOL_ID")],
        kindOfToken: { claims in isAccessToken(claims) },
        make: { options, _ throws(ConfigurationError) in
            .cognitoAccess(issuer: try pool(options, provider: .cognitoAccess), clientIDs: options.audiences)
        },
        recognizes: { issuer, _ in Profile.isCognitoIssuer(issuer) },
        suggests: { issuer, _, claims in ["--issuer", issuer] + (claims.string("client_id").map { ["--audience", $0] } ?? []) })

    private static let tokenUse = JSONKey("token_use")

    /// Whether a Cognito token says it is an access token (`token_use` `access`).
    private static func isAccessToken(_ claims: JSONObject) -> Bool { claims[tokenUse]?.stringEquals("access") == true }

    /// The one user pool issuer of `options`.
    private static func pool(_ options: Profile.Options, provider: Provider) throws(ConfigurationError) -> String {
        guard options.issuers.count == 1, let issuer = options.issuers.first, Profile.isCognitoIssuer(issuer) else {
            throw ConfigurationError("a \(provider.rawValue) profile needs one user pool issuer, https://cognito-idp.REGION.amazonaws.com/POOL_ID (--issuer, \"issuers\"), not \(options.issuers.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
        return issuer
    }
}
