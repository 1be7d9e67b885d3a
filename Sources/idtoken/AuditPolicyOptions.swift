import ArgumentParser
import IDTokenKit

/// The policy options of DESIGN §7 that shape a profile, for `idtoken audit`.
struct AuditPolicyOptions: ParsableArguments {
    @Option(name: .customLong("project-id"), help: "Firebase project ID.") var projectID: String?
    @Option(help: "Accepted audience (client ID, App ID). Repeatable.") var audience: [String] = []
    @Option(help: "Accepted issuer (OIDC; extra Facebook issuers). Repeatable.") var issuer: [String] = []
    @Option(name: .customLong("jwks-url"), help: "The OIDC issuer's JWKS URL.") var jwksURL: String?
    @Option(help: "Accepted algorithm (OIDC). Repeatable.") var algorithm: [String] = []
    @Option(help: "The raw nonce; the token must carry its SHA-256 hex.") var nonce: String?
    @Option(name: .customLong("nonce-exact"), help: "The nonce the token must carry exactly.") var nonceExact: String?
    @Option(help: "Leeway for time checks, in seconds (0–300, default 60).") var leeway: Int?
    @Option(help: "Firebase tenant ID.") var tenant: String?
    @Option(name: .customLong("allow-sign-in-provider"), help: "Accepted Firebase sign-in provider. Repeatable.")
    var allowSignInProvider: [String] = []

    /// How records' nonces are compared when the command line chose a mode.
    var nonceMode: NonceMode? {
        if nonce != nil { return .sha256Hex }
        if nonceExact != nil { return .exact }
        return nil
    }

    func profile(provider name: String) throws(ConfigurationError) -> Profile {
        guard let provider = Provider(rawValue: name) else {
            throw ConfigurationError("unknown provider \"\(name)\": use firebase, firebase-session, apple, facebook or oidc")
        }
        if nonce != nil && nonceExact != nil { throw ConfigurationError("give --nonce or --nonce-exact, not both") }
        let allowed = allowSignInProvider.isEmpty ? nil : allowSignInProvider
        var profile: Profile
        switch provider {
        case .firebase, .firebaseSessionCookie:
            guard let projectID else { throw ConfigurationError("a Firebase audit needs --project-id") }
            profile = provider == .firebase
                ? .firebase(projectID: projectID, tenant: tenant, allowedSignInProviders: allowed)
                : .firebaseSessionCookie(projectID: projectID, tenant: tenant, allowedSignInProviders: allowed)
        case .apple:
            guard !audience.isEmpty else { throw ConfigurationError("a Sign in with Apple audit needs --audience (bundle ID or Services ID)") }
            profile = .apple(clientIDs: audience)
        case .facebook:
            guard audience.count == 1 else { throw ConfigurationError("a Facebook audit needs one --audience: the Facebook App ID") }
            profile = .facebook(appID: audience[0], extraIssuers: issuer)
        case .oidc:
            guard !issuer.isEmpty, !audience.isEmpty else { throw ConfigurationError("an OIDC audit needs --issuer and --audience") }
            var algorithms = Profile.oidcDefaultAlgorithms
            if !algorithm.isEmpty {
                algorithms = []
                for algorithmName in algorithm {
                    guard let value = JWSAlgorithm(rawValue: algorithmName) else { throw ConfigurationError("unknown algorithm \(algorithmName)") }
                    algorithms.insert(value)
                }
            }
            profile = .oidc(issuers: issuer, audiences: audience, algorithms: algorithms, jwksURL: jwksURL)
        }
        if let leeway { profile = profile.withLeeway(Leeway(seconds: leeway)) }
        try profile.validate()
        return profile
    }
}
