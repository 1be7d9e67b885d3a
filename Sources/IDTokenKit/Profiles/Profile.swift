/// What a verifier accepts, as data (DESIGN §4): the pinned issuers and algorithms, the audience rule, the
/// claims that must be present and their types, how the provider carries the nonce, the leeway, and where the
/// provider publishes its keys.
///
/// Use the provider constructors — ``firebase(projectID:tenant:allowedSignInProviders:revocation:)``,
/// ``firebaseSessionCookie(projectID:tenant:allowedSignInProviders:revocation:)``, ``apple(clientIDs:)``,
/// ``facebook(appID:extraIssuers:)``, `oidc(issuers:audiences:algorithms:jwksURL:)` — and adjust fields if
/// needed. The token never chooses anything here: the algorithm, issuer and keys all come from the profile.
public struct Profile: Sendable {
    /// Whose rules these are: which claims the provider's tokens carry and how ``VerifiedToken`` reads them.
    public var provider: Provider { didSet { tokenName = provider.tokenName } }
    /// What the provider's tokens are called in messages (``ProviderDefinition/tokenName``), kept beside it for the
    /// verification path.
    public private(set) var tokenName: String
    /// `iss` must equal one of these.
    public var issuer: IssuerRule
    /// The algorithms a token may be signed with. `none` and HMAC cannot be named at all.
    public var algorithms: Set<JWSAlgorithm>
    /// `aud` must name one of the accepted audiences.
    public var audience: AudienceRule
    /// Whether the header must name its key with `kid` (true for Firebase, Apple and Facebook).
    public var requiresKeyID: Bool
    /// The header's `typ`, when the profile requires one (`JWT` for Firebase App Check); a token with another or
    /// none is refused as ``TokenError/Code/unsupportedHeader``.
    public var requiredType: String?
    /// Which time claims are required; the checks themselves are DESIGN §2's, with ``leeway``.
    public var time: TimeRules
    /// Further checks, in order, after issuer, audience, time and subject.
    public var rules: [any ClaimRule]
    /// How the provider carries a nonce: ``Nonce/Mode/sha256Hex`` for Apple and Facebook; nil when it has none.
    /// A verifier compares a nonce given without a mode (``Nonce/init(_:mode:)``) this way.
    public var nonceMode: NonceMode?
    /// The clock skew allowed on `exp`, `nbf`, `iat` and `auth_time` (0–300 s; 60 s by default).
    public var leeway: Leeway
    /// Size and nesting limits applied before a token is read.
    public var limits: JWSLimits
    /// Where the provider publishes its keys (a JWKS or a kid → certificate map), for an HTTPS key source.
    public var keysURL: String?
    /// Advice appended to `wrong_audience` messages.
    public var audienceHint: String
    /// Advice appended to `wrong_issuer` messages.
    public var issuerHint: String

    /// A profile from its parts. The provider constructors and ``init(options:revocation:)`` are the usual way;
    /// this one is for issuers none of them describes. ``validate()`` (run by every verifier) checks the result.
    public init(provider: Provider, issuers: [String], algorithms: Set<JWSAlgorithm>, audience: AudienceRule,
                requiresKeyID: Bool, time: TimeRules, rules: [any ClaimRule], nonceMode: NonceMode?,
                keysURL: String?, leeway: Leeway = .default, limits: JWSLimits = .default,
                audienceHint: String = "", issuerHint: String = "", requiredType: String? = nil) {
        self.provider = provider
        self.tokenName = provider.tokenName
        self.issuer = IssuerRule(issuers)
        self.algorithms = algorithms
        self.audience = audience
        self.requiresKeyID = requiresKeyID
        self.requiredType = requiredType
        self.time = time
        self.rules = rules
        self.nonceMode = nonceMode
        self.keysURL = keysURL
        self.leeway = leeway
        self.limits = limits
        self.audienceHint = audienceHint
        self.issuerHint = issuerHint
    }

    /// The pinned issuers.
    public var issuers: [String] { issuer.accepted }

    /// The same profile in storage of its own: its strings and arrays copied, its rules in containers of their
    /// own (a rule's own strings stay shared), for a verifier replica (``IDTokenVerifier/replica()``).
    package func replica() -> Profile {
        var copy = self
        copy.tokenName = tokenName.inStorageOfItsOwn
        copy.issuer = IssuerRule(issuer.accepted.map(\.inStorageOfItsOwn),
                                 patterns: issuer.patterns.map {
                                     .init(prefix: $0.prefix.inStorageOfItsOwn, suffix: $0.suffix.inStorageOfItsOwn)
                                 })
        copy.audience.accepted = audience.accepted.map(\.inStorageOfItsOwn)
        copy.requiredType = requiredType?.inStorageOfItsOwn
        // Each rule taken out of its existential and put in a new one: a new box, not the shared one retained.
        copy.rules = rules.map { $0.inContainerOfItsOwn }
        copy.keysURL = keysURL?.inStorageOfItsOwn
        copy.audienceHint = audienceHint.inStorageOfItsOwn
        copy.issuerHint = issuerHint.inStorageOfItsOwn
        return copy
    }

    /// Returns a copy with another leeway.
    public func withLeeway(_ leeway: Leeway) -> Profile {
        var copy = self
        copy.leeway = leeway
        return copy
    }

    /// Refuses a header whose `typ` is not the one the profile requires (``requiredType``); the header object is
    /// read only for a profile that requires one.
    func checkType(_ header: @autoclosure () -> JSONObject) throws(TokenError) {
        guard let type = requiredType else { return }
        let value = header()["typ"]
        guard value?.stringEquals(type) != true else { return }
        throw TokenError(.unsupportedHeader, claim: "typ",
                         "the \(provider.tokenName)'s header must have \"typ\": \"\(type)\", not \(value.map(Quoted.value) ?? "none")")
    }

    /// Every check of the profile that reads the header and the claims alone — algorithm, `kid`, `typ`, audience,
    /// issuer, times, the claim rules — each run on its own, so that all that is off is reported, not only the
    /// first: what `idtoken inspect` tells a user whose token another profile was meant for. The checks are the
    /// verifier's own; the signature, keys, nonce and replay are not looked at, so an empty answer does not make a
    /// token valid.
    package func findings(header: JSONObject, claims: JSONObject, now: Double) -> [TokenError] {
        var found: [TokenError] = []
        func run(_ check: () throws(TokenError) -> Void) {
            do { try check() } catch { found.append(error) }
        }
        if let name = header["alg"]?.string {
            if JWSAlgorithm(rawValue: name).map({ !algorithms.contains($0) }) ?? true {
                found.append(TokenError(.algorithmNotAllowed, claim: "alg",
                                        "the header's \"alg\" is \(name); a \(tokenName) profile accepts \(algorithms.map(\.rawValue).sorted().joined(separator: ", "))"))
            }
        } else {
            found.append(TokenError(.algorithmNotAllowed, claim: "alg", "the header has no \"alg\" string"))
        }
        if requiresKeyID && header["kid"]?.string == nil {
            found.append(TokenError(.unknownKey, claim: "kid", "the header names no key (\"kid\"); a \(tokenName) always does"))
        }
        run { () throws(TokenError) in try checkType(header) }
        run { () throws(TokenError) in try audience.check(claims, profile: self) }
        run { () throws(TokenError) in try issuer.check(claims, profile: self) }
        let seconds = Double(leeway.seconds)
        run { () throws(TokenError) in _ = try time.check(claims, now: now, leeway: seconds, tokenName: tokenName) }
        let context = ClaimContext(now: now, leeway: seconds, tokenName: tokenName)
        for rule in rules { run { () throws(TokenError) in try rule.check(claims, context) } }
        return found
    }

    /// Checks that the profile can be used; verifiers call this when they are built.
    public func validate() throws(ConfigurationError) {
        guard Leeway.allowedRange.contains(leeway.seconds) else {
            throw ConfigurationError("the leeway must be \(Leeway.allowedRange.lowerBound) to \(Leeway.allowedRange.upperBound) seconds, not \(leeway.seconds)")
        }
        guard !issuer.accepted.isEmpty || !issuer.patterns.isEmpty, issuer.accepted.allSatisfy({ !$0.isEmpty }) else {
            throw ConfigurationError("a \(provider.rawValue) profile needs at least one issuer, and no issuer may be empty")
        }
        guard !audience.accepted.isEmpty, audience.accepted.allSatisfy({ !$0.isEmpty }) else {
            throw ConfigurationError(provider == .firebase || provider == .firebaseSessionCookie
                                     ? "a Firebase profile needs the project ID"
                                     : provider == .firebaseAppCheck ? "a firebase-app-check profile needs the project number"
                                     : "a \(provider.rawValue) profile needs at least one audience (client ID or app ID), and none may be empty")
        }
        guard !algorithms.isEmpty else { throw ConfigurationError("a profile needs at least one algorithm") }
        guard limits.maxTokenBytes > 0, limits.maxDepth > 0 else { throw ConfigurationError("the token limits must be positive") }
    }
}
