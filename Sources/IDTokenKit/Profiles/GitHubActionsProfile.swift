extension Profile {
    /// The issuer of GitHub Actions OIDC tokens (github.com; GitHub Enterprise Cloud with a customised issuer adds
    /// the enterprise's slug, which ``oidc(issuers:audiences:algorithms:jwksURL:nonceMode:)`` covers).
    public static let githubActionsIssuer = "https://token.actions.githubusercontent.com"
    /// GitHub Actions' JWKS.
    public static let githubActionsJWKSURL = "https://token.actions.githubusercontent.com/.well-known/jwks"
    /// The claims that tie a GitHub Actions token to a repository, an owner, a workflow or an enterprise. Any workflow
    /// of any repository on GitHub can ask for a token with any audience, so a profile must require at least one of
    /// these (`--require-claim repository=OWNER/REPO`).
    public static let githubActionsIdentityClaims = ["repository", "repository_id", "repository_owner", "repository_owner_id", "sub",
                                                     "job_workflow_ref", "workflow_ref", "enterprise", "enterprise_id"]

    /// GitHub Actions OIDC tokens for `audiences` (what the workflow asked for: `core.getIDToken(audience)`, by
    /// default the owner's URL `https://github.com/OWNER`), from the workflows that `requiredClaims` describe.
    ///
    /// RS256 with `kid`; `iss` exactly `https://token.actions.githubusercontent.com`; `aud` one of `audiences`;
    /// `sub` non-empty; `iat`, `exp` required; every claim of `requiredClaims` matching one of its values, of which
    /// one at least must be among ``githubActionsIdentityClaims``.
    /// - Throws: ``ConfigurationError`` when no claim ties the tokens to a repository, owner, workflow or enterprise.
    public static func githubActions(audiences: [String], requiredClaims: [Options.RequiredClaim]) throws(ConfigurationError) -> Profile {
        try Profile(options: Options(provider: .githubActions, audiences: audiences, requiredClaims: requiredClaims))
    }
}

extension ProviderDefinition {
    static let githubActions = ProviderDefinition(
        .githubActions, tokenName: "GitHub Actions OIDC token",
        summary: "GitHub Actions OIDC tokens, a workflow run's identity; the profile must require a claim naming the repository, owner, workflow or enterprise (--require-claim repository=OWNER/REPO)",
        needs: [audience("the audience the workflow asks for (core.getIDToken(audience); by default https://github.com/OWNER)")],
        note: "any workflow on GitHub can ask for one: a profile requires the claims that name yours (--require-claim repository=OWNER/REPO)",
        make: { options, _ throws(ConfigurationError) in
            guard options.requiredClaims.contains(where: { Profile.githubActionsIdentityClaims.contains($0.name) && !$0.values.contains("*") }) else {
                throw ConfigurationError("a github-actions profile would accept a token of any workflow on GitHub: require the claims that name yours, e.g. --require-claim repository=OWNER/REPO (\"claims\": {\"repository\": \"OWNER/REPO\"}); one of \(Profile.githubActionsIdentityClaims.joined(separator: ", ")), not \"*\"")
            }
            return Profile(
                provider: .githubActions,
                issuers: [Profile.githubActionsIssuer],
                algorithms: [.rs256],
                audience: .oneOf(options.audiences, allowsArray: true),
                requiresKeyID: true,
                time: TimeRules(requiresIssuedAt: true),
                rules: [SubjectRule()],
                nonceMode: nil,
                keysURL: Profile.githubActionsJWKSURL,
                audienceHint: "The audience is what the workflow asked for (core.getIDToken(audience), the audience input of the cloud's login action; by default https://github.com/OWNER)",
                issuerHint: "Only tokens issued by GitHub Actions (github.com) are accepted; an enterprise's customised issuer is an oidc profile")
        },
        recognizes: { issuer, _ in issuer == Profile.githubActionsIssuer },
        suggests: { _, audience, claims in
            (audience.first.map { ["--audience", $0] } ?? []) + (claims.string("repository").map { ["--require-claim", "repository=" + $0] } ?? [])
        })
}
