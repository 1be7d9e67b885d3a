extension Profile {
    /// Microsoft Entra ID's issuer of v2.0 tokens, around the tenant ID.
    public static let entraIssuer = IssuerRule.TenantPattern(prefix: "https://login.microsoftonline.com/", suffix: "/v2.0")
    /// The issuer of v1.0 tokens (Azure AD's), around the tenant ID.
    public static let entraV1Issuer = IssuerRule.TenantPattern(prefix: "https://sts.windows.net/", suffix: "/")

    /// Microsoft Entra ID tokens for the application `clientIDs` (its client ID as a GUID and, when its tokens carry
    /// it, its Application ID URI `api://…`), of the tenants `tenants`, or of every tenant with `anyTenant`.
    ///
    /// RS256 with `kid`; `tid` a tenant ID, one of `tenants` (`tenant_mismatch` otherwise) unless `anyTenant`; `iss`
    /// exactly `https://login.microsoftonline.com/<tid>/v2.0` — the token's own tenant, so that a key set that signs
    /// for every tenant (`common`, `organizations`) does not make another tenant's token pass — or, with `v1`,
    /// `https://sts.windows.net/<tid>/`; `aud` one of `clientIDs`; `sub` non-empty; `iat`, `exp` required. Keys: the
    /// tenant's own key set for one tenant, else the `common` one, which signs for all.
    /// - Throws: ``ConfigurationError`` when neither tenants nor `anyTenant` are given, or both, or a tenant ID is not
    ///   a GUID.
    public static func entra(clientIDs: [String], tenants: [String], anyTenant: Bool = false, v1: Bool = false) throws(ConfigurationError) -> Profile {
        guard !tenants.isEmpty != anyTenant else {
            throw ConfigurationError(anyTenant
                ? "give the tenants (--tenant, \"tenant\") or any tenant (--any-tenant, \"anyTenant\"), not both"
                : "an entra profile needs the tenant IDs whose tokens it accepts (--tenant TENANT_ID, repeatable; \"tenant\"), or, for an app open to every organisation, --any-tenant (\"anyTenant\": true): Entra's common key set signs every tenant's tokens, so a profile without either would accept a token of any")
        }
        // Tenant IDs as tokens write them, in lowercase.
        let tenants = tenants.map { $0.lowercased() }
        for tenant in tenants where !EntraTenantRule.isTenantID(tenant) {
            throw ConfigurationError("the Entra tenant ID \"\(tenant)\" (--tenant, \"tenant\") is not a GUID: give the directory (tenant) ID the tokens carry in \"tid\", not a domain name")
        }
        let patterns = [entraIssuer] + (v1 ? [entraV1Issuer] : [])
        let keysTenant = tenants.count == 1 ? tenants[0] : "common"
        return Profile(
            provider: .entra,
            issuers: tenants.flatMap { tenant in patterns.map { $0.issuer(of: tenant) } },
            algorithms: [.rs256],
            audience: .oneOf(clientIDs, allowsArray: false),
            requiresKeyID: true,
            time: TimeRules(requiresIssuedAt: true),
            rules: [SubjectRule(), EntraTenantRule(tenants: anyTenant ? nil : tenants, issuers: patterns)],
            nonceMode: .exact,
            keysURL: "https://login.microsoftonline.com/\(keysTenant)/discovery/v2.0/keys",
            audienceHint: "The audience is the application's client ID (a GUID) or its Application ID URI (api://…), whichever the token was requested for; give both when both occur",
            issuerHint: v1 ? "The issuer is the token's own tenant's" : "The issuer is the token's own tenant's, of v2.0 tokens; v1.0 tokens (https://sts.windows.net/<tenant>/) are accepted with --entra-v1")
        .withIssuerPatterns(anyTenant ? patterns : [])
    }

    /// A copy whose issuer rule also accepts issuers of the shapes `patterns`.
    func withIssuerPatterns(_ patterns: [IssuerRule.TenantPattern]) -> Profile {
        var copy = self
        copy.issuer.patterns = patterns
        return copy
    }
}

/// Microsoft Entra ID's tenant: `tid` a tenant ID, one of the accepted ones (or any), and the issuer that tenant's
/// own — `iss` of another tenant than `tid` is refused, so that the key set that signs for every tenant cannot lend
/// one tenant's token another's issuer.
public struct EntraTenantRule: ClaimRule, Equatable {
    /// The tenant IDs accepted; nil: any tenant.
    public let tenants: [String]?
    /// The issuer shapes a tenant's tokens may have (v2.0, and v1.0 when accepted).
    public let issuers: [IssuerRule.TenantPattern]
    private static let tid = JSONKey("tid")

    /// A rule accepting the tokens of `tenants` (nil: of any tenant) issued as one of `issuers` filled with their `tid`.
    public init(tenants: [String]?, issuers: [IssuerRule.TenantPattern]) {
        self.tenants = tenants
        self.issuers = issuers
    }

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        guard let value = claims[Self.tid] else {
            throw TokenError(.invalidClaim, claim: "tid", "the \(context.tokenName) has no \"tid\" (tenant ID) claim")
        }
        guard let tid = value.string, Self.isTenantID(tid) else {
            throw TokenError(.invalidClaim, claim: "tid", "the \"tid\" (tenant ID) claim must be a GUID string, not \(Quoted.value(value))")
        }
        if let tenants, !tenants.contains(where: { $0.lowercased() == tid.lowercased() }) {
            throw TokenError(.tenantMismatch, claim: "tid",
                             "the \(context.tokenName) is of the tenant \(tid), but only \(AudienceRule.list(tenants)) is accepted")
        }
        let expected = issuers.map { $0.issuer(of: tid) }
        guard claims.string(ClaimKey.iss, isOneOf: expected) == true else {
            throw TokenError(.wrongIssuer, claim: "iss",
                             "the \(context.tokenName)'s \"iss\" is \(claims[ClaimKey.iss].map(Quoted.value) ?? "missing"), not its own tenant's (\"tid\" \(tid)): \(AudienceRule.list(expected))")
        }
    }

    /// Whether `text` is a GUID: 8-4-4-4-12 hexadecimal digits.
    static func isTenantID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (48...57).contains(byte) || (97...102).contains(byte | 0x20) else { return false }
            }
        }
        return true
    }
}

extension ProviderDefinition {
    static let entra = ProviderDefinition(
        .entra, tokenName: "Microsoft Entra ID token",
        summary: "Microsoft Entra ID (Azure AD) tokens of listed tenants (--tenant, repeatable) or, named on purpose, of any (--any-tenant); v1.0 tokens with --entra-v1",
        needs: [audience("the application's client ID, and its Application ID URI (api://…) when tokens carry that")],
        takes: [.tenant, .anyTenant, .entraV1],
        make: { options, _ throws(ConfigurationError) in
            try .entra(clientIDs: options.audiences, tenants: options.tenants, anyTenant: options.anyTenant, v1: options.entraV1)
        },
        recognizes: { issuer, _ in
            Profile.entraIssuer.matches(issuer.utf8) || Profile.entraV1Issuer.matches(issuer.utf8)
        },
        suggests: { _, audience, claims in
            (audience.first.map { ["--audience", $0] } ?? []) + (claims.string("tid").map { ["--tenant", $0] } ?? [])
                + (claims.string("ver") == "1.0" ? ["--entra-v1"] : [])
        })
}
