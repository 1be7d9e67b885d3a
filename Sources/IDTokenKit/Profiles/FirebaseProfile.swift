extension Profile {
    /// Google's JWKS for Firebase ID tokens.
    public static let firebaseJWKSURL =
        "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
    /// The same keys as a kid → PEM-certificate map (what the Firebase Admin SDKs fetch).
    public static let firebaseCertificatesURL =
        "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"
    /// The kid → PEM-certificate map for Firebase session cookies.
    public static let firebaseSessionCookieCertificatesURL =
        "https://www.googleapis.com/identitytoolkit/v3/relyingparty/publicKeys"

    /// Firebase Authentication ID tokens of one project.
    ///
    /// RS256 only; `iss` is `https://securetoken.google.com/<projectID>`; `aud` is exactly the project ID, as a
    /// string; `sub` (the user ID) is 1–128 characters; `iat`, `exp` and `auth_time` are required.
    ///
    /// - Parameters:
    ///   - projectID: the Firebase project ID, which the token's `aud` must be.
    ///   - tenant: accept only tokens of this Identity Platform tenant (`tenant_mismatch` otherwise).
    ///   - allowedSignInProviders: accept only these `firebase.sign_in_provider` values, e.g.
    ///     `["apple.com", "facebook.com", "github.com"]` (`provider_not_allowed` otherwise).
    ///   - revocation: per-user revocation times; tokens whose `auth_time` is earlier are `revoked`.
    public static func firebase(projectID: String, tenant: String? = nil, allowedSignInProviders: [String]? = nil,
                                revocation: (any RevocationTimes)? = nil) -> Profile {
        firebaseProfile(.firebase, issuer: "https://securetoken.google.com/" + projectID, projectID: projectID,
                        keysURL: firebaseJWKSURL, tenant: tenant, allowedSignInProviders: allowedSignInProviders,
                        revocation: revocation)
    }

    /// Firebase session cookies (`createSessionCookie`) of one project: like ID tokens, but issued by
    /// `https://session.firebase.google.com/<projectID>` and signed with the session-cookie keys.
    public static func firebaseSessionCookie(projectID: String, tenant: String? = nil, allowedSignInProviders: [String]? = nil,
                                             revocation: (any RevocationTimes)? = nil) -> Profile {
        firebaseProfile(.firebaseSessionCookie, issuer: "https://session.firebase.google.com/" + projectID, projectID: projectID,
                        keysURL: firebaseSessionCookieCertificatesURL, tenant: tenant,
                        allowedSignInProviders: allowedSignInProviders, revocation: revocation)
    }

    private static func firebaseProfile(_ provider: Provider, issuer: String, projectID: String, keysURL: String,
                                         tenant: String?, allowedSignInProviders: [String]?,
                                         revocation: (any RevocationTimes)?) -> Profile {
        var rules: [any ClaimRule] = [SubjectRule(maxLength: 128),
                                      FirebaseClaimsRule(tenant: tenant, allowedSignInProviders: allowedSignInProviders)]
        if let revocation { rules.append(RevocationRule(revocation)) }
        let what = provider == .firebase ? "ID token" : "session cookie"
        return Profile(
            provider: provider,
            issuers: [issuer],
            algorithms: [.rs256],
            audience: .exactly(projectID),
            requiresKeyID: true,
            time: TimeRules(requiresIssuedAt: true, requiresAuthTime: true),
            rules: rules,
            nonceMode: nil,
            keysURL: keysURL,
            audienceHint: "Make sure the \(what) comes from the same Firebase project (\"\(projectID)\") that this backend is configured for",
            issuerHint: "Make sure the \(what) comes from the Firebase project \"\(projectID)\"" +
                (provider == .firebase ? " and is an ID token (session cookies have another issuer)"
                                       : " and is a session cookie (ID tokens have another issuer)"))
    }
}

extension ProviderDefinition {
    static let firebase = firebase(.firebase, tokenName: "Firebase ID token", summary: "Firebase Authentication ID tokens (`getIdToken`)",
                                   issuerPrefix: "https://securetoken.google.com/")
    static let firebaseSessionCookie = firebase(.firebaseSessionCookie, tokenName: "Firebase session cookie",
                                                summary: "Firebase session cookies (`createSessionCookie`)",
                                                issuerPrefix: "https://session.firebase.google.com/")

    private static func firebase(_ provider: Provider, tokenName: String, summary: String, issuerPrefix: String) -> ProviderDefinition {
        ProviderDefinition(
            provider, tokenName: tokenName, summary: summary,
            needs: [(.projectID, "the Firebase project ID (--project-id, \"projectId\")")],
            takes: [.tenant, .allowedSignInProviders],
            refusals: [.audiences: "a Firebase token's audience is its project: give the project ID (--project-id, \"projectId\"), not an audience"],
            takesRevocation: true,
            make: { options, revocation throws(ConfigurationError) in
                guard options.tenants.count <= 1 else {
                    throw ConfigurationError("a Firebase token belongs to one tenant: give one (--tenant, \"tenant\"), not \(options.tenants.count)")
                }
                let allowed = options.allowedSignInProviders.isEmpty ? nil : options.allowedSignInProviders
                return provider == .firebase
                    ? .firebase(projectID: options.projectID!, tenant: options.tenant, allowedSignInProviders: allowed, revocation: revocation)
                    : .firebaseSessionCookie(projectID: options.projectID!, tenant: options.tenant, allowedSignInProviders: allowed,
                                             revocation: revocation)
            },
            recognizes: { issuer, _ in issuer.hasPrefix(issuerPrefix) },
            suggests: { _, audience, _ in audience.first.map { ["--project-id", $0] } ?? [] })
    }
}
