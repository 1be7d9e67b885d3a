extension Profile {
    /// Google's JWKS for Google Sign-In ID tokens.
    public static let googleJWKSURL = "https://www.googleapis.com/oauth2/v3/certs"
    /// The two spellings of Google's issuer, both in use.
    public static let googleIssuers = ["https://accounts.google.com", "accounts.google.com"]

    /// Google Sign-In ID tokens for your OAuth client IDs.
    ///
    /// RS256 only; `iss` exactly `https://accounts.google.com` or `accounts.google.com` (no look-alike passes);
    /// `aud` one of `clientIDs`; `azp`, when present, one of `clientIDs` too (an Android app's token names its own
    /// client ID there); `sub` non-empty; `iat` and `exp` required; `email_verified` a boolean; with
    /// `hostedDomains`, `hd` (the Google Workspace domain) must be one of them — a consumer account has none and is
    /// refused. Nonces are compared exactly, as Google echoes the one the app sent.
    public static func google(clientIDs: [String], hostedDomains: [String] = []) -> Profile {
        var rules: [any ClaimRule] = [SubjectRule(), GoogleClaimsRule(),
                                      AllowedValuesRule("azp", oneOf: clientIDs, required: false, code: .wrongAudience,
                                                        hint: "\"azp\" is the client the user signed in to; add its client ID to the accepted audiences")]
        if !hostedDomains.isEmpty {
            rules.append(AllowedValuesRule("hd", oneOf: hostedDomains, required: true,
                                           hint: "\"hd\" is the user's Google Workspace domain; consumer accounts have none"))
        }
        return Profile(
            provider: .google,
            issuers: googleIssuers,
            algorithms: [.rs256],
            audience: .oneOf(clientIDs, allowsArray: false),
            requiresKeyID: true,
            time: TimeRules(requiresIssuedAt: true),
            rules: rules,
            nonceMode: .exact,
            keysURL: googleJWKSURL,
            audienceHint: "The audience is the OAuth client ID the app signed in with (the web client ID when an Android or iOS app requests an ID token for its backend)",
            issuerHint: "Only tokens issued by Google Sign-In are accepted; a Firebase ID token has its own profile (firebase)")
    }
}

extension ProviderDefinition {
    static let google = ProviderDefinition(
        .google, tokenName: "Google ID token", summary: "Google Sign-In ID tokens",
        needs: [audience("the client ID")],
        takes: [.hostedDomains],
        make: { options, _ in .google(clientIDs: options.audiences, hostedDomains: options.hostedDomains) },
        recognizes: { issuer, _ in Profile.googleIssuers.contains(issuer) },
        suggests: { _, audience, claims in
            var options = audience.first.map { ["--audience", $0] } ?? []
            if let azp = claims.string("azp"), !audience.contains(azp) { options += ["--audience", azp] }
            return options
        })
}
