extension Profile {
    /// A profile as options: what `idtoken verify` and `idtoken audit` take on the command line, what an audit
    /// configuration file's profile holds, and what a program fills in. ``Profile/init(options:revocation:)``
    /// turns them into a ``Profile``, checking them once with one set of messages, so that the same options give
    /// the same profile — and the same verdict — whichever of these doors they came through.
    ///
    /// Empty lists and nil members mean "the provider's default". Facebook takes several App IDs: an app usually
    /// has a production App ID and a test App ID, and tokens of either are legitimate.
    public struct Options: Sendable, Equatable {
        /// Whose rules the profile applies.
        public var provider: Provider
        /// The Firebase project ID (Firebase ID tokens and session cookies only): it fixes issuer and audience.
        public var projectID: String?
        /// Accepted `aud` values: Apple bundle or Services IDs, Facebook App IDs, OIDC client IDs. Not Firebase.
        public var audiences: [String]
        /// Accepted issuers (OIDC, required), or issuers accepted besides Facebook's own. Not Firebase or Apple.
        public var issuers: [String]
        /// Accepted algorithm names (`RS256`, `ES256`, …); empty: the provider's. Parsed by the constructor.
        public var algorithms: [String]
        /// Where the keys are published, replacing the provider's URL (required in effect for OIDC).
        public var jwksURL: String?
        /// Clock leeway in seconds, 0–300; nil: ``Leeway/default``.
        public var leeway: Int?
        /// The Firebase tenant the token must belong to.
        public var tenant: String?
        /// Accepted `firebase.sign_in_provider` values; empty: any.
        public var allowedSignInProviders: [String]
        /// How a token carries the nonce; nil: the provider's way (``Profile/nonceMode``).
        public var nonceMode: NonceMode?
        /// Size and nesting limits for tokens.
        public var limits: JWSLimits
        /// The Firebase project number (Firebase App Check only): it fixes issuer and audience.
        public var projectNumber: String?
        /// Accepted App Check app IDs (`sub`); empty: any app of the project. Firebase App Check only.
        public var appIDs: [String]
        /// Accepted Google Workspace domains (`hd`); empty: any account. Google only.
        public var hostedDomains: [String]
        /// Claims the token must carry, each with the values it may hold (patterns, `*` matching any run of
        /// characters): every claim listed must match one of its values. Any provider.
        public var requiredClaims: [RequiredClaim]

        /// A claim a profile requires (`--require-claim NAME=VALUE`, `"claims": {"NAME": VALUE}`), and the values
        /// it accepts: ``AllowedValuesRule/Matching/patterns``.
        public struct RequiredClaim: Sendable, Equatable {
            /// The claim's name.
            public var name: String
            /// The values accepted, patterns in which `*` matches any run of characters.
            public var values: [String]

            /// The claim `name`, accepted when it matches one of `values`.
            public init(name: String, values: [String]) {
                self.name = name
                self.values = values
            }
        }

        /// Options for `provider`; every other member is optional, and ``Profile/init(options:revocation:)`` says
        /// which ones the provider needs.
        public init(provider: Provider, projectID: String? = nil, audiences: [String] = [], issuers: [String] = [],
                    algorithms: [String] = [], jwksURL: String? = nil, leeway: Int? = nil, tenant: String? = nil,
                    allowedSignInProviders: [String] = [], nonceMode: NonceMode? = nil, limits: JWSLimits = .default,
                    projectNumber: String? = nil, appIDs: [String] = [], hostedDomains: [String] = [],
                    requiredClaims: [RequiredClaim] = []) {
            self.provider = provider
            self.projectID = projectID
            self.audiences = audiences
            self.issuers = issuers
            self.algorithms = algorithms
            self.jwksURL = jwksURL
            self.leeway = leeway
            self.tenant = tenant
            self.allowedSignInProviders = allowedSignInProviders
            self.nonceMode = nonceMode
            self.limits = limits
            self.projectNumber = projectNumber
            self.appIDs = appIDs
            self.hostedDomains = hostedDomains
            self.requiredClaims = requiredClaims
        }

        /// The provider names, for messages.
        public static let providerNames = Provider.allCases.map(\.rawValue).joined(separator: ", ")

        /// Reads a provider name (`firebase`, `firebase-session`, `apple`, `facebook`, `oidc`, `firebase-app-check`,
        /// `apple-notification`, `google`).
        public static func provider(named name: String) throws(ConfigurationError) -> Provider {
            guard let provider = Provider(rawValue: name) else {
                throw ConfigurationError("unknown provider \"\(name)\" (\(providerNames))")
            }
            return provider
        }

        /// Reads `NAME=VALUE` claim requirements (`--require-claim`), the values of one name gathered in the order
        /// given: `repository=acme/api`, `ref=refs/heads/main`, `ref=refs/tags/v*`.
        public static func requiredClaims(parsing texts: [String]) throws(ConfigurationError) -> [RequiredClaim] {
            var claims: [RequiredClaim] = []
            for text in texts {
                guard let equals = text.firstIndex(of: "=") else {
                    throw ConfigurationError("--require-claim \(text): give NAME=VALUE (e.g. repository=acme/api; * matches any run of characters)")
                }
                let name = String(text[..<equals]), value = String(text[text.index(after: equals)...])
                if let index = claims.firstIndex(where: { $0.name == name }) {
                    claims[index].values.append(value)
                } else {
                    claims.append(RequiredClaim(name: name, values: [value]))
                }
            }
            return claims
        }

        /// The claims whose rules a profile always applies, with the option that sets each: not for
        /// ``requiredClaims``.
        static let claimsWithTheirOwnOptions = [
            "iss": "the issuer (--issuer, \"issuers\", or the provider's own)", "aud": "the audience (--audience, \"audiences\")",
            "exp": "the time rules", "nbf": "the time rules", "iat": "the time rules", "nonce": "the nonce (--nonce, --nonce-exact)",
        ]

        /// Reads algorithm names; one message for every door.
        public static func algorithms(named names: [String]) throws(ConfigurationError) -> Set<JWSAlgorithm> {
            var algorithms: Set<JWSAlgorithm> = []
            for name in names {
                guard let algorithm = JWSAlgorithm(rawValue: name) else {
                    throw ConfigurationError("unknown algorithm \"\(name)\" (\(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")); HMAC and none are never accepted)")
                }
                algorithms.insert(algorithm)
            }
            return algorithms
        }
    }

    /// The profile `options` describe, checked once: the members that do not apply to the provider, the ones it
    /// needs, algorithm names and the leeway. Messages name each option as the command line spells it and as an
    /// audit configuration file does (`--project-id`, `"projectId"`).
    ///
    /// - Parameters:
    ///   - options: what the profile accepts.
    ///   - revocation: per-user revocation times for Firebase tokens (a lookup, not an option).
    /// - Throws: ``ConfigurationError`` naming what is wrong.
    public init(options: Options, revocation: (any RevocationTimes)? = nil) throws(ConfigurationError) {
        let provider = options.provider
        let name = provider.rawValue
        let firebase = provider == .firebase || provider == .firebaseSessionCookie
        let appCheck = provider == .firebaseAppCheck
        if firebase {
            guard let projectID = options.projectID, !projectID.isEmpty else {
                throw ConfigurationError("a \(name) profile needs the Firebase project ID (--project-id, \"projectId\")")
            }
            guard options.audiences.isEmpty else {
                throw ConfigurationError("a Firebase token's audience is its project: give the project ID (--project-id, \"projectId\"), not an audience")
            }
        } else if appCheck {
            guard let number = options.projectNumber, !number.isEmpty, number.utf8.allSatisfy({ (48...57).contains($0) }) else {
                throw ConfigurationError("a firebase-app-check profile needs the Firebase project number, digits only (--project-number, \"projectNumber\"; the Firebase console's project settings show it)")
            }
            guard options.audiences.isEmpty else {
                throw ConfigurationError("an App Check token's audience is its project: give the project number (--project-number, \"projectNumber\"), not an audience")
            }
            if let projectID = options.projectID, projectID.isEmpty {
                throw ConfigurationError("the project ID (--project-id, \"projectId\") must not be empty")
            }
        } else {
            guard options.projectID == nil else {
                throw ConfigurationError("the project ID (--project-id, \"projectId\") applies to Firebase tokens and App Check tokens only")
            }
            guard !options.audiences.isEmpty else {
                let what = provider == .apple || provider == .appleNotification ? "the bundle ID or Services ID"
                    : provider == .facebook ? "the Facebook App ID; several are accepted, e.g. a production and a test App ID"
                    : "the client ID"
                throw ConfigurationError("\(provider == .facebook || provider == .google ? "a" : "an") \(name) profile needs an audience (--audience, \"audiences\"): \(what)")
            }
        }
        if !firebase {
            guard options.tenant == nil, options.allowedSignInProviders.isEmpty else {
                throw ConfigurationError("the tenant and the allowed sign-in providers (--tenant, --allow-sign-in-provider, \"tenant\", \"allowedSignInProviders\") apply to Firebase tokens only")
            }
        }
        if !appCheck && (options.projectNumber != nil || !options.appIDs.isEmpty) {
            throw ConfigurationError("the project number and app IDs (--project-number, --app-id, \"projectNumber\", \"appId\") apply to firebase-app-check only")
        }
        if provider != .google && !options.hostedDomains.isEmpty {
            throw ConfigurationError("hosted domains (--hosted-domain, \"hostedDomains\") apply to google only")
        }
        if provider != .facebook && provider != .oidc && !options.issuers.isEmpty {
            throw ConfigurationError("the \(name) issuer is fixed; issuers (--issuer, \"issuers\") apply to facebook (extra issuers) and oidc")
        }
        if provider == .oidc && options.issuers.isEmpty {
            throw ConfigurationError("an oidc profile needs an issuer (--issuer, \"issuers\")")
        }
        for claim in options.requiredClaims {
            guard !claim.name.isEmpty else { throw ConfigurationError("a required claim (--require-claim, \"claims\") needs a name: NAME=VALUE") }
            if let owner = Options.claimsWithTheirOwnOptions[claim.name] {
                throw ConfigurationError("\"\(claim.name)\" cannot be a required claim (--require-claim, \"claims\"): it is checked by \(owner)")
            }
            guard !claim.values.isEmpty, claim.values.allSatisfy({ !$0.isEmpty }) else {
                throw ConfigurationError("the required claim \"\(claim.name)\" (--require-claim, \"claims\") needs a value; * accepts any")
            }
            guard options.requiredClaims.filter({ $0.name == claim.name }).count == 1 else {
                throw ConfigurationError("the claim \"\(claim.name)\" is required twice; list its accepted values once")
            }
        }
        if revocation != nil && !firebase {
            throw ConfigurationError("revocation times apply to Firebase tokens only")
        }

        let allowed = options.allowedSignInProviders.isEmpty ? nil : options.allowedSignInProviders
        switch provider {
        case .firebase:
            self = .firebase(projectID: options.projectID!, tenant: options.tenant, allowedSignInProviders: allowed,
                             revocation: revocation)
        case .firebaseSessionCookie:
            self = .firebaseSessionCookie(projectID: options.projectID!, tenant: options.tenant,
                                          allowedSignInProviders: allowed, revocation: revocation)
        case .apple:
            self = .apple(clientIDs: options.audiences)
        case .facebook:
            self = .facebook(appIDs: options.audiences, extraIssuers: options.issuers)
        case .oidc:
            self = .oidc(issuers: options.issuers, audiences: options.audiences)
        case .firebaseAppCheck:
            self = .firebaseAppCheck(projectNumber: options.projectNumber!, projectID: options.projectID, appIDs: options.appIDs)
        case .appleNotification:
            self = .appleNotification(clientIDs: options.audiences)
        case .google:
            self = .google(clientIDs: options.audiences, hostedDomains: options.hostedDomains)
        }
        if !options.algorithms.isEmpty { algorithms = try Options.algorithms(named: options.algorithms) }
        if let jwksURL = options.jwksURL { keysURL = jwksURL }
        if let seconds = options.leeway { leeway = Leeway(seconds: seconds) }
        if let nonceMode = options.nonceMode { self.nonceMode = nonceMode }
        limits = options.limits
        for claim in options.requiredClaims {
            rules.append(AllowedValuesRule(claim.name, oneOf: claim.values, required: true,
                                           hint: "A rule of the profile (--require-claim, \"claims\")", matching: .patterns))
        }
        try validate()
    }
}
