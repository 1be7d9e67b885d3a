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
        /// The tenants whose tokens are accepted: the Firebase tenant the token must belong to (one), or the
        /// Microsoft Entra tenant IDs (`tid`) of an `entra` profile.
        public var tenants: [String]
        /// The one tenant of ``tenants`` (Firebase's).
        public var tenant: String? {
            get { tenants.first }
            set { tenants = newValue.map { [$0] } ?? [] }
        }
        /// An `entra` profile accepts tokens of every Microsoft Entra tenant (multi-tenant apps open to any
        /// organisation): named on purpose, as the alternative to ``tenants``.
        public var anyTenant: Bool
        /// An `entra` profile also accepts v1.0 tokens (issuer `https://sts.windows.net/<tenant ID>/`).
        public var entraV1: Bool
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
                    requiredClaims: [RequiredClaim] = [], tenants: [String] = [], anyTenant: Bool = false, entraV1: Bool = false) {
            self.provider = provider
            self.projectID = projectID
            self.audiences = audiences
            self.issuers = issuers
            self.algorithms = algorithms
            self.jwksURL = jwksURL
            self.leeway = leeway
            self.tenants = (tenant.map { [$0] } ?? []) + tenants
            self.anyTenant = anyTenant
            self.entraV1 = entraV1
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

        /// Reads a provider name (``Provider``'s raw values).
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

    /// The profile `options` describe, checked once: the members that do not apply to the provider and the ones it
    /// needs (its ``ProviderDefinition``), the required claims, algorithm names and the leeway. Messages name each option as the command line spells it and as an
    /// audit configuration file does (`--project-id`, `"projectId"`).
    ///
    /// - Parameters:
    ///   - options: what the profile accepts.
    ///   - revocation: per-user revocation times for Firebase tokens (a lookup, not an option).
    /// - Throws: ``ConfigurationError`` naming what is wrong.
    public init(options: Options, revocation: (any RevocationTimes)? = nil) throws(ConfigurationError) {
        self = try options.provider.definition.profile(options, revocation: revocation)
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
