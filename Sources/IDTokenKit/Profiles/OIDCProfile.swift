extension Profile {
    /// The algorithms a generic OIDC profile accepts unless told otherwise.
    public static let oidcDefaultAlgorithms: Set<JWSAlgorithm> = [.rs256, .es256]

    /// Any OpenID Connect issuer: `iss` one of `issuers`, `aud` one of `audiences` (a string, or an array that
    /// contains one), `sub` and `exp` required, `iat` optional. `kid` is not required: a header without one
    /// matches a key set that holds exactly one key. Without `jwksURL`, the keys of a profile of one issuer are
    /// found by OpenID Connect discovery (``discoveryURL(of:)``, which ``HTTPKeySource`` follows).
    public static func oidc(issuers: [String], audiences: [String],
                            algorithms: Set<JWSAlgorithm> = oidcDefaultAlgorithms,
                            jwksURL: String? = nil, nonceMode: NonceMode? = .exact) -> Profile {
        Profile(
            provider: .oidc,
            issuers: issuers,
            algorithms: algorithms,
            audience: .oneOf(audiences, allowsArray: true),
            requiresKeyID: false,
            time: TimeRules(requiresIssuedAt: false),
            rules: [SubjectRule()],
            nonceMode: nonceMode,
            keysURL: jwksURL ?? issuers.first.flatMap { issuers.count == 1 ? discoveryURL(of: $0) : nil },
            audienceHint: "The audience is the client ID registered with the issuer",
            issuerHint: "Add the issuer to the accepted issuers if it is one you trust")
    }
}

extension Profile {
    /// The address of `issuer`'s OpenID Connect discovery document: the issuer without a trailing `/`, then
    /// `/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4); nil for an issuer that is not an
    /// `https` (or `http`) URL, which has none.
    public static func discoveryURL(of issuer: String) -> String? {
        guard issuer.hasPrefix("https://") || issuer.hasPrefix("http://") else { return nil }
        return (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + HTTPKeySource.discoverySuffix
    }
}

extension ProviderDefinition {
    /// Any issuer: ``TokenInspection`` names a token `oidc` when no other provider recognises it.
    static let oidc = ProviderDefinition(
        .oidc, tokenName: "ID token", summary: "ID tokens of any OpenID Connect issuer",
        needs: [audience("the client ID"), (.issuers, "an issuer (--issuer, \"issuers\")")],
        make: { options, _ in .oidc(issuers: options.issuers, audiences: options.audiences) },
        recognizes: { _, _ in true },
        suggests: { issuer, audience, _ in ["--issuer", issuer] + (audience.first.map { ["--audience", $0] } ?? []) })
}
