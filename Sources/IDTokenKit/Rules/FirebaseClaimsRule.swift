/// Firebase's `firebase` claim: its shape, and the tenant and sign-in-provider options.
///
/// When present, `firebase` must be an object whose `sign_in_provider`, `tenant` and `sign_in_second_factor`
/// are strings and whose `identities` is an object. With ``tenant`` set, `firebase.tenant` must equal it
/// (`tenant_mismatch`); with ``allowedSignInProviders`` set, `firebase.sign_in_provider` must be one of them
/// (`provider_not_allowed`). Both options are checked on one reading of the nested object.
public struct FirebaseClaimsRule: ClaimRule, Equatable {
    /// The Identity Platform tenant ID the token must belong to; nil accepts any tenant and none.
    public var tenant: String?
    /// The sign-in providers accepted (`"apple.com"`, `"facebook.com"`, `"github.com"`, `"password"`…);
    /// nil accepts any.
    public var allowedSignInProviders: [String]?

    /// A rule requiring `tenant` (when given) and one of `allowedSignInProviders` (when given).
    public init(tenant: String? = nil, allowedSignInProviders: [String]? = nil) {
        self.tenant = tenant
        self.allowedSignInProviders = allowedSignInProviders
    }

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        let firebase: JSONObject?
        if let object = claims.object(ClaimKey.firebase) {
            try FirebaseClaimsRule.checkShape(object)
            firebase = object
        } else if let kind = claims.kind(of: ClaimKey.firebase) {
            throw TokenError(.invalidClaim, claim: "firebase", "the \"firebase\" claim must be an object, not a \(kind)")
        } else {
            firebase = nil
        }
        if let tenant {
            let actual = firebase?[ClaimKey.tenant]
            guard let actual, actual.stringEquals(tenant) else {
                let got = actual.map(Quoted.value) ?? "no tenant"
                throw TokenError(.tenantMismatch, claim: "firebase.tenant",
                                 "the \(context.tokenName) belongs to tenant \(got), but this verifier accepts only tenant \"\(tenant)\". Verify it with a verifier configured for its tenant")
            }
        }
        if let allowed = allowedSignInProviders {
            let provider = firebase?[ClaimKey.signInProvider]
            guard let provider, allowed.contains(where: { provider.stringEquals($0) }) else {
                let got = provider.map(Quoted.value) ?? "no sign-in provider"
                throw TokenError(.providerNotAllowed, claim: "firebase.sign_in_provider",
                                 "the user signed in with \(got), which this backend does not accept (allowed: \(allowed.joined(separator: ", ")))")
            }
        }
    }

    static func checkShape(_ firebase: JSONObject) throws(TokenError) {
        // One walk over the object's few members, noting the kind of each checked member that has the wrong
        // one (a look-up per name would walk it four times, to the end for each name that is absent). The
        // refusals are then reported in a fixed order, whatever the order of the members.
        var wrong: (provider: JSONKind?, tenant: JSONKind?, secondFactor: JSONKind?, identities: JSONKind?)
        firebase.forEachMember { name, kind, _ in
            if ClaimKey.identities.isName(name) {
                if kind != .object { wrong.identities = kind }
            } else if kind != .string {
                if ClaimKey.signInProvider.isName(name) {
                    wrong.provider = kind
                } else if ClaimKey.tenant.isName(name) {
                    wrong.tenant = kind
                } else if ClaimKey.signInSecondFactor.isName(name) {
                    wrong.secondFactor = kind
                }
            }
        }
        if let kind = wrong.provider { throw notAString(ClaimKey.signInProvider, kind) }
        if let kind = wrong.tenant { throw notAString(ClaimKey.tenant, kind) }
        if let kind = wrong.secondFactor { throw notAString(ClaimKey.signInSecondFactor, kind) }
        if let kind = wrong.identities {
            throw TokenError(.invalidClaim, claim: "firebase.identities",
                             "\"firebase.identities\" must be an object mapping providers to lists of IDs, not a \(kind)")
        }
    }

    private static func notAString(_ key: JSONKey, _ kind: JSONKind) -> TokenError {
        let name = key.name
        return TokenError(.invalidClaim, claim: "firebase.\(name)", "\"firebase.\(name)\" must be a string, not a \(kind)")
    }
}
