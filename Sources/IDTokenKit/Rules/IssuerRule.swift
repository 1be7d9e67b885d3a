/// `iss` must be a string equal to one of the pinned issuers, or, for a profile of every tenant of a multi-tenant
/// issuer, of the shape of one of its ``patterns``.
public struct IssuerRule: Sendable, Equatable {
    /// The issuers accepted, compared byte for byte.
    public var accepted: [String]
    /// Issuers accepted by shape: a prefix and a suffix around one path segment, the tenant
    /// (`https://login.microsoftonline.com/` … `/v2.0`). A rule of the profile then checks which tenant (Entra's
    /// `tid`, ``EntraTenantRule``): the shape alone accepts any.
    public var patterns: [TenantPattern]

    /// An issuer of one tenant among many: `prefix`, a tenant, `suffix`.
    public struct TenantPattern: Sendable, Equatable {
        /// What comes before the tenant (`https://login.microsoftonline.com/`).
        public let prefix: String
        /// What comes after it (`/v2.0`).
        public let suffix: String

        /// The issuers `prefix` + a tenant + `suffix`.
        public init(prefix: String, suffix: String) {
            self.prefix = prefix
            self.suffix = suffix
        }

        /// The issuer of `tenant`.
        public func issuer(of tenant: String) -> String { prefix + tenant + suffix }

        /// Whether `issuer` is `prefix`, a non-empty segment without `/`, then `suffix`.
        public func matches(_ issuer: some Collection<UInt8>) -> Bool {
            let bytes = Array(issuer)
            let head = Array(prefix.utf8), tail = Array(suffix.utf8)
            guard bytes.count > head.count + tail.count, bytes.starts(with: head), bytes.reversed().starts(with: tail.reversed()) else { return false }
            return !bytes[head.count..<(bytes.count - tail.count)].contains(UInt8(ascii: "/"))
        }

        /// How messages show it: `https://login.microsoftonline.com/{tenant}/v2.0`.
        public var description: String { prefix + "{tenant}" + suffix }
    }

    /// A rule accepting the issuers `accepted`, and those of the shapes `patterns`.
    public init(_ accepted: [String], patterns: [TenantPattern] = []) {
        self.accepted = accepted
        self.patterns = patterns
    }

    func check(_ claims: JSONObject, profile: Profile) throws(TokenError) {
        // The usual case, an accepted issuer, is answered in place; the rest reads the claim again to explain.
        if claims.string(ClaimKey.iss, isOneOf: accepted) == true { return }
        guard let iss = claims[ClaimKey.iss] else {
            throw TokenError(.invalidClaim, claim: "iss", "the \(profile.tokenName) has no \"iss\" (issuer) claim")
        }
        guard iss.kind == .string else {
            throw TokenError(.invalidClaim, claim: "iss", "the \"iss\" (issuer) claim must be a string, not a \(iss.kind)")
        }
        for issuer in accepted where iss.stringEquals(issuer) { return }
        if !patterns.isEmpty, let bytes = iss.stringBytes, patterns.contains(where: { $0.matches(bytes) }) { return }
        let expected = AudienceRule.list(accepted + patterns.map(\.description))
        throw TokenError(.wrongIssuer, claim: "iss",
                         "the \(profile.tokenName) has incorrect \"iss\" (issuer) claim: expected \(expected) but got \(Quoted.value(iss)). \(profile.issuerHint)")
    }
}
