import ArgumentParser
import IDTokenKit

/// The policy options of DESIGN §7, shared by `idtoken verify` and `idtoken audit`: they fill one
/// ``Profile/Options``, and ``Profile/init(options:revocation:)`` checks them, so both commands (and an audit
/// configuration file) accept and refuse the same options with the same messages.
struct ProfileOptions: ParsableArguments {
    @Option(help: ArgumentHelp(Provider.allCases.dropLast().map(\.rawValue).joined(separator: ", ") + " or " + Provider.allCases.last!.rawValue + "."))
    var provider: String?

    @Option(name: .customLong("project-id"), help: "Firebase project ID (firebase, firebase-session).")
    var projectID: String?

    @Option(help: "Accepted audience: Apple bundle or Services ID (apple, apple-notification), Facebook App ID (an app's production and test App IDs are both accepted when given), Google, OIDC or Cognito client ID, the audience a GitHub Actions workflow asks for. Repeatable.")
    var audience: [String] = []

    @Option(help: "Accepted issuer (oidc), the user pool's issuer (cognito), or an extra issuer (facebook). Repeatable.")
    var issuer: [String] = []

    @Option(name: .customLong("jwks-url"), help: "Where the issuer publishes its keys (oidc; overrides the provider's default).")
    var jwksURL: String?

    @Option(help: "Accepted signature algorithm (RS256, ES256, …). Repeatable; default: the provider's.")
    var algorithm: [String] = []

    @Option(help: "Raw nonce; the token must carry its SHA-256 in lowercase hex.")
    var nonce: String?

    @Option(name: .customLong("nonce-exact"), help: "Nonce the token must carry exactly.")
    var nonceExact: String?

    @Option(help: "Clock leeway in seconds, 0–300 (default 60).")
    var leeway: Int?

    @Option(help: "Firebase tenant ID the token must belong to (one), or an accepted Microsoft Entra tenant ID, the token's tid (entra; repeatable).")
    var tenant: [String] = []

    @Flag(name: .customLong("any-tenant"), help: "Accept tokens of every Microsoft Entra tenant (entra: a multi-tenant app open to any organisation), instead of --tenant.")
    var anyTenant = false

    @Flag(name: .customLong("entra-v1"), help: "Also accept Microsoft Entra v1.0 tokens, issued by https://sts.windows.net/<tenant ID>/ (entra).")
    var entraV1 = false

    @Option(name: .customLong("project-number"), help: "Firebase project number (firebase-app-check): the issuer and audience of its App Check tokens.")
    var projectNumber: String?

    @Option(name: .customLong("app-id"), help: "Accepted Firebase app ID, the App Check token's subject (firebase-app-check; default: any app of the project). Repeatable.")
    var appID: [String] = []

    @Option(name: .customLong("hosted-domain"), help: "Accepted Google Workspace domain, the token's hd (google; a token without hd is then refused). Repeatable.")
    var hostedDomain: [String] = []

    @Option(name: .customLong("require-claim"), help: ArgumentHelp("A claim the token must carry, as NAME=VALUE; * in VALUE matches any run of characters. Repeatable: several values of one claim accept any of them, several claims must all match (any provider).", valueName: "name=value"))
    var requireClaim: [String] = []

    @Option(name: .customLong("allow-sign-in-provider"), help: "Accepted Firebase sign-in provider (apple.com, github.com, …). Repeatable.")
    var allowSignInProvider: [String] = []

    func validate() throws {
        if nonce != nil && nonceExact != nil { throw ValidationError("give --nonce or --nonce-exact, not both") }
    }

    /// How tokens' nonces are compared when the command line gave one.
    var nonceMode: NonceMode? {
        if nonce != nil { return .sha256Hex }
        if nonceExact != nil { return .exact }
        return nil
    }

    /// The nonce expected, if one was given.
    var expectedNonce: Nonce? { (nonce ?? nonceExact).map { Nonce($0, mode: nonceMode) } }

    /// Whether any option that shapes a profile was given (an audit with `--config` takes none).
    var shapesProfile: Bool {
        provider != nil || projectID != nil || !audience.isEmpty || !issuer.isEmpty || jwksURL != nil || !algorithm.isEmpty
            || leeway != nil || !tenant.isEmpty || anyTenant || entraV1 || !allowSignInProvider.isEmpty || projectNumber != nil || !appID.isEmpty
            || !hostedDomain.isEmpty || !requireClaim.isEmpty
    }

    /// The options as ``Profile/Options``.
    func options() throws(ConfigurationError) -> Profile.Options {
        guard let provider else {
            throw ConfigurationError("give --provider (\(Profile.Options.providerNames))")
        }
        return Profile.Options(provider: try Profile.Options.provider(named: provider), projectID: projectID,
                               audiences: audience, issuers: issuer, algorithms: algorithm, jwksURL: jwksURL,
                               leeway: leeway, allowedSignInProviders: allowSignInProvider,
                               nonceMode: nonceMode, projectNumber: projectNumber, appIDs: appID,
                               hostedDomains: hostedDomain, requiredClaims: try Profile.Options.requiredClaims(parsing: requireClaim),
                               tenants: tenant, anyTenant: anyTenant, entraV1: entraV1)
    }

    /// The profile the options describe.
    func profile() throws(ConfigurationError) -> Profile {
        try Profile(options: options())
    }
}
