/// One provider, whole, in one place: what its tokens are called, which options its profile takes and needs, how it
/// builds the ``Profile``, how `idtoken inspect` recognises its tokens, the options it suggests for them and what it
/// says about them. ``Profile/init(options:revocation:)`` (every door's options: the command line, a configuration
/// file, a program), ``TokenInspection`` and docs/options.md's provider table are derived from these definitions,
/// so that adding a provider is a case of ``Provider`` and its definition (with its constructor beside it).
public struct ProviderDefinition: Sendable {
    /// The members of ``Profile/Options`` that only some providers take. The others (algorithms, the keys URL, the
    /// leeway, the nonce's mode, the limits, the required claims) apply to every provider.
    public enum Option: CaseIterable, Sendable {
        /// ``Profile/Options/projectID``.
        case projectID
        /// ``Profile/Options/projectNumber``.
        case projectNumber
        /// ``Profile/Options/audiences``.
        case audiences
        /// ``Profile/Options/issuers``.
        case issuers
        /// ``Profile/Options/tenant``.
        case tenant
        /// ``Profile/Options/allowedSignInProviders``.
        case allowedSignInProviders
        /// ``Profile/Options/appIDs``.
        case appIDs
        /// ``Profile/Options/hostedDomains``.
        case hostedDomains
        /// ``Profile/Options/anyTenant``.
        case anyTenant
        /// ``Profile/Options/entraV1``.
        case entraV1

        /// How the option is named to a user: what it is, then its command-line and configuration-file spellings.
        public var spelling: String {
            switch self {
            case .projectID: return "the project ID (--project-id, \"projectId\")"
            case .projectNumber: return "the project number (--project-number, \"projectNumber\")"
            case .audiences: return "audiences (--audience, \"audiences\")"
            case .issuers: return "issuers (--issuer, \"issuers\")"
            case .tenant: return "the tenant (--tenant, \"tenant\")"
            case .anyTenant: return "any tenant (--any-tenant, \"anyTenant\")"
            case .entraV1: return "v1.0 tokens (--entra-v1, \"entraV1\")"
            case .allowedSignInProviders: return "the allowed sign-in providers (--allow-sign-in-provider, \"allowedSignInProviders\")"
            case .appIDs: return "the app IDs (--app-id, \"appId\")"
            case .hostedDomains: return "hosted domains (--hosted-domain, \"hostedDomains\")"
            }
        }

        var plural: Bool { [.audiences, .issuers, .allowedSignInProviders, .appIDs, .hostedDomains].contains(self) }

        /// Whether `options` give this option (a non-empty list, a value).
        func isGiven(in options: Profile.Options) -> Bool {
            switch self {
            case .projectID: return options.projectID != nil
            case .projectNumber: return options.projectNumber != nil
            case .audiences: return !options.audiences.isEmpty
            case .issuers: return !options.issuers.isEmpty
            case .tenant: return !options.tenants.isEmpty
            case .anyTenant: return options.anyTenant
            case .entraV1: return options.entraV1
            case .allowedSignInProviders: return !options.allowedSignInProviders.isEmpty
            case .appIDs: return !options.appIDs.isEmpty
            case .hostedDomains: return !options.hostedDomains.isEmpty
            }
        }
    }

    /// The provider defined.
    public let provider: Provider
    /// What a person calls its tokens, for messages ("Firebase ID token").
    public let tokenName: String
    /// What its tokens are, in a line (docs/options.md).
    public let summary: String
    /// The options it needs, each with how a message names it ("the client ID").
    public let needs: [(option: Option, what: String)]
    /// The options it takes besides those it needs.
    public let takes: [Option]
    /// Why an option it does not take is refused, where that says more than "applies to … only".
    let refusals: [Option: String]
    /// Whether a program may give it revocation times.
    let takesRevocation: Bool
    /// Builds the profile from options whose members it takes (checked before).
    let make: @Sendable (_ options: Profile.Options, _ revocation: (any RevocationTimes)?) throws(ConfigurationError) -> Profile
    /// Whether a token with this issuer is one of its tokens (`idtoken inspect`; read unverified), before
    /// ``kindOfToken``: ``isItsToken(issuer:claims:)`` asks both.
    let recognizes: @Sendable (_ issuer: String, _ claims: Claims) -> Bool
    /// The options, after `--provider NAME`, that describe a profile for such a token.
    let suggests: @Sendable (_ issuer: String, _ audience: [String], _ claims: Claims) -> [String]
    /// What a person looking at such a token should know, if anything.
    let note: String?
    /// Whether a token's claims make it this provider's kind of token, for a provider whose issuer another provider
    /// shares (Sign in with Apple's identity tokens and its notifications, which carry `events`): a verifier routes a
    /// token of a shared issuer by it. Nil: the issuer is the provider's alone.
    public let kindOfToken: (@Sendable (JSONObject) -> Bool)?

    init(_ provider: Provider, tokenName: String, summary: String, needs: [(option: Option, what: String)], takes: [Option] = [],
         refusals: [Option: String] = [:], takesRevocation: Bool = false, note: String? = nil,
         kindOfToken: (@Sendable (JSONObject) -> Bool)? = nil,
         make: @escaping @Sendable (_ options: Profile.Options, _ revocation: (any RevocationTimes)?) throws(ConfigurationError) -> Profile,
         recognizes: @escaping @Sendable (_ issuer: String, _ claims: Claims) -> Bool,
         suggests: @escaping @Sendable (_ issuer: String, _ audience: [String], _ claims: Claims) -> [String]) {
        self.provider = provider
        self.tokenName = tokenName
        self.summary = summary
        self.needs = needs
        self.takes = takes
        self.refusals = refusals
        self.takesRevocation = takesRevocation
        self.note = note
        self.kindOfToken = kindOfToken
        self.make = make
        self.recognizes = recognizes
        self.suggests = suggests
    }

    /// The audience a provider needs, named for its users ("the client ID").
    static func audience(_ what: String) -> (option: Option, what: String) {
        (.audiences, "an audience (--audience, \"audiences\"): " + what)
    }

    /// Whether a token with `issuer` and `claims` (read unverified) is one of this provider's.
    func isItsToken(issuer: String, claims: Claims) -> Bool {
        recognizes(issuer, claims) && (kindOfToken?(claims.object) ?? true)
    }

    /// "a firebase profile", "an oidc profile".
    var profileName: String {
        let name = provider.rawValue
        return ("aeiou".contains(name.first!) ? "an " : "a ") + name + " profile"
    }

    /// The profile `options` describe, for this provider: the options it does not take refused, those it needs
    /// required, then its constructor.
    func profile(_ options: Profile.Options, revocation: (any RevocationTimes)?) throws(ConfigurationError) -> Profile {
        for option in Option.allCases where option.isGiven(in: options) && !takes.contains(option) && !needs.contains(where: { $0.option == option }) {
            if let reason = refusals[option] { throw ConfigurationError(reason) }
            let takers = ProviderDefinition.all.filter { $0.takes.contains(option) || $0.needs.contains { $0.option == option } }.map(\.provider.rawValue)
            let fixed = option == .issuers ? "the \(provider.rawValue) issuer is fixed; " : ""
            throw ConfigurationError("\(fixed)\(option.spelling) \(option.plural ? "apply" : "applies") to \(ProviderDefinition.list(takers)) only")
        }
        for (option, what) in needs where !option.isGiven(in: options) || (option == .projectID && options.projectID!.isEmpty) {
            throw ConfigurationError("\(profileName) needs \(what)")
        }
        if revocation != nil && !takesRevocation {
            throw ConfigurationError("revocation times apply to Firebase tokens only")
        }
        return try make(options, revocation)
    }

    static func list(_ names: [String]) -> String {
        names.count <= 1 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    /// Every provider's definition, in ``Provider``'s order.
    public static let all: [ProviderDefinition] = Provider.allCases.map(\.definition)

    /// docs/options.md's provider table: each provider, what it verifies, what it needs and what else it takes.
    package static var markdownTable: String {
        var lines = ["| provider | tokens | needs | also takes | keys |", "|---|---|---|---|---|"]
        for definition in all {
            let profile = try? definition.make(.example(for: definition), nil)
            let needs = definition.needs.map { "\($0.what)" }.joined(separator: "; ")
            let takes = definition.takes.map(\.spelling).joined(separator: "; ")
            lines.append("| `\(definition.provider.rawValue)` | \(definition.summary) | \(needs) | \(takes.isEmpty ? "—" : takes) | "
                         + (profile?.keysURL.map { "`\($0)`" } ?? "`--jwks-url`") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension Profile.Options {
    /// Options that satisfy what `definition` needs, for the docs table's keys column.
    static func example(for definition: ProviderDefinition) -> Profile.Options {
        var options = Profile.Options(provider: definition.provider)
        for (option, _) in definition.needs {
            switch option {
            case .projectID: options.projectID = "PROJECT"
            case .projectNumber: options.projectNumber = "1"
            case .audiences: options.audiences = ["CLIENT"]
            case .issuers:
                options.issuers = [.cognito, .cognitoAccess].contains(definition.provider) ? ["https://cognito-idp.REGION.amazonaws.com/POOL_ID"] : ["https://ISSUER"]
            case .tenant: options.tenants = ["TENANT_ID"]
            default: break
            }
        }
        options.requiredClaims = [.init(name: "repository", values: ["OWNER/REPO"])]
        // Entra's keys of every tenant (one tenant's are at its own URL).
        options.anyTenant = definition.takes.contains(.anyTenant)
        return options
    }
}

extension Provider {
    /// The provider's definition: its options, its profile, how its tokens are recognised.
    public var definition: ProviderDefinition {
        switch self {
        case .firebase: return .firebase
        case .firebaseSessionCookie: return .firebaseSessionCookie
        case .apple: return .apple
        case .facebook: return .facebook
        case .oidc: return .oidc
        case .firebaseAppCheck: return .firebaseAppCheck
        case .appleNotification: return .appleNotification
        case .google: return .google
        case .githubActions: return .githubActions
        case .cognito: return .cognito
        case .cognitoAccess: return .cognitoAccess
        case .entra: return .entra
        }
    }

    /// What a person calls this kind of token, for messages (``Profile/tokenName`` holds it for a profile's).
    public var tokenName: String { definition.tokenName }
}
