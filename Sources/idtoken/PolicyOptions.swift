import ArgumentParser
import IDTokenKit

/// The policy options shared by the commands that verify tokens (DESIGN §7), and the profile they describe.
struct PolicyOptions: ParsableArguments {
    @Option(name: .long, help: "firebase, firebase-session, apple, facebook or oidc.")
    var provider: Provider

    @Option(name: .customLong("project-id"), help: "Firebase project ID (firebase, firebase-session).")
    var projectID: String?

    @Option(name: .long, help: "Accepted audience: Apple bundle or Services ID, Facebook App ID, OIDC client ID. Repeatable.")
    var audience: [String] = []

    @Option(name: .long, help: "Accepted issuer (oidc), or an extra issuer (facebook). Repeatable.")
    var issuer: [String] = []

    @Option(name: .customLong("jwks-url"), help: "Where the issuer publishes its keys (oidc; overrides the provider's default).")
    var jwksURL: String?

    @Option(name: .long, help: "Accepted signature algorithm (RS256, ES256, …). Repeatable; default: the provider's.")
    var algorithm: [JWSAlgorithm] = []

    @Option(name: .long, help: "Raw nonce; the token must carry its SHA-256 in lowercase hex.")
    var nonce: String?

    @Option(name: .customLong("nonce-exact"), help: "Nonce the token must carry exactly.")
    var nonceExact: String?

    @Option(name: .long, help: "Clock leeway in seconds, 0–300 (default 60).")
    var leeway: Int = Leeway.default.seconds

    @Option(name: .long, help: "Firebase tenant ID the token must belong to.")
    var tenant: String?

    @Option(name: .customLong("allow-sign-in-provider"), help: "Accepted Firebase sign-in provider (apple.com, github.com, …). Repeatable.")
    var allowSignInProvider: [String] = []

    func validate() throws {
        if nonce != nil && nonceExact != nil { throw ValidationError("give --nonce or --nonce-exact, not both") }
        if !Leeway.allowedRange.contains(leeway) { throw ValidationError("--leeway must be 0 to 300 seconds") }
        let firebase = provider == .firebase || provider == .firebaseSessionCookie
        if firebase {
            if projectID == nil { throw ValidationError("--provider \(provider.rawValue) needs --project-id") }
            if !audience.isEmpty { throw ValidationError("a Firebase token's audience is its project: use --project-id, not --audience") }
        } else {
            if tenant != nil || !allowSignInProvider.isEmpty {
                throw ValidationError("--tenant and --allow-sign-in-provider apply to Firebase tokens only")
            }
            if projectID != nil { throw ValidationError("--project-id applies to Firebase tokens only") }
            if audience.isEmpty {
                let what = provider == .apple ? "the bundle ID or Services ID" : provider == .facebook ? "the Facebook App ID" : "the client ID"
                throw ValidationError("--provider \(provider.rawValue) needs --audience (\(what))")
            }
        }
        if (firebase || provider == .apple) && !issuer.isEmpty {
            throw ValidationError("the \(provider.rawValue) issuer is fixed; --issuer applies to facebook (extra issuers) and oidc")
        }
        if provider == .oidc && issuer.isEmpty { throw ValidationError("--provider oidc needs --issuer") }
    }

    /// The profile the options describe.
    func profile() throws -> Profile {
        var profile: Profile
        switch provider {
        case .firebase, .firebaseSessionCookie:
            let allowed = allowSignInProvider.isEmpty ? nil : allowSignInProvider
            profile = provider == .firebase
                ? .firebase(projectID: projectID ?? "", tenant: tenant, allowedSignInProviders: allowed)
                : .firebaseSessionCookie(projectID: projectID ?? "", tenant: tenant, allowedSignInProviders: allowed)
        case .apple:
            profile = .apple(clientIDs: audience)
        case .facebook:
            profile = .facebook(appID: audience[0], extraIssuers: issuer)
            if audience.count > 1 { profile.audience = .oneOf(audience, allowsArray: false) }
        case .oidc:
            profile = .oidc(issuers: issuer, audiences: audience, jwksURL: jwksURL)
        }
        if !algorithm.isEmpty { profile.algorithms = Set(algorithm) }
        if let jwksURL { profile.keysURL = jwksURL }
        profile.leeway = Leeway(seconds: leeway)
        do { try profile.validate() } catch { throw UsageError(error.reason) }
        return profile
    }

    /// The nonce expected, if one was given.
    var expectedNonce: Nonce? {
        if let nonce { return .sha256Hex(nonce) }
        if let nonceExact { return .exact(nonceExact) }
        return nil
    }
}

extension Provider: ExpressibleByArgument {}
extension JWSAlgorithm: ExpressibleByArgument {}
