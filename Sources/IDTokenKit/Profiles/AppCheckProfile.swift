extension Profile {
    /// Firebase App Check's JWKS.
    public static let appCheckJWKSURL = "https://firebaseappcheck.googleapis.com/v1/jwks"
    /// The issuer of a project's App Check tokens, without the project number.
    public static let appCheckIssuerPrefix = "https://firebaseappcheck.googleapis.com/"

    /// Firebase App Check tokens of one project, which apps send beside the ID token (`X-Firebase-AppCheck`).
    ///
    /// RS256 only, and the header's `typ` must be `JWT`; `iss` is exactly
    /// `https://firebaseappcheck.googleapis.com/<projectNumber>` (not any issuer that starts with the service's
    /// address: another project's tokens are refused); `aud` is an array that contains `projects/<projectNumber>`
    /// (or `projects/<projectID>` when the ID is given); `sub`, the app ID, is non-empty and, when `appIDs` is not
    /// empty, one of them; `iat` and `exp` required. Limited-use tokens are accepted once when the verifier has a
    /// replay cache.
    ///
    /// - Parameters:
    ///   - projectNumber: the Firebase project number (digits), which names the issuer and the audience.
    ///   - projectID: the project ID, also accepted as the audience `projects/<projectID>`.
    ///   - appIDs: the Firebase app IDs (`1:123456:ios:abcdef`) accepted; empty: any app of the project.
    public static func firebaseAppCheck(projectNumber: String, projectID: String? = nil, appIDs: [String] = []) -> Profile {
        var audiences = ["projects/" + projectNumber]
        if let projectID { audiences.append("projects/" + projectID) }
        var rules: [any ClaimRule] = [SubjectRule()]
        if !appIDs.isEmpty {
            rules.append(AllowedValuesRule("sub", oneOf: appIDs, required: true,
                                           hint: "The subject of an App Check token is the Firebase app ID; add the app to the accepted app IDs"))
        }
        return Profile(
            provider: .firebaseAppCheck,
            issuers: [appCheckIssuerPrefix + projectNumber],
            algorithms: [.rs256],
            audience: AudienceRule(accepted: audiences, allowsArray: true, requiresArray: true),
            requiresKeyID: true,
            time: TimeRules(requiresIssuedAt: true),
            rules: rules,
            nonceMode: nil,
            keysURL: appCheckJWKSURL,
            audienceHint: "Make sure the App Check token comes from the Firebase project \(projectNumber)",
            issuerHint: "Only App Check tokens of the project \(projectNumber) are accepted",
            requiredType: "JWT")
    }
}

extension ProviderDefinition {
    static let firebaseAppCheck = ProviderDefinition(
        .firebaseAppCheck, tokenName: "Firebase App Check token",
        summary: "Firebase App Check tokens (the `X-Firebase-AppCheck` header): which app called",
        needs: [(.projectNumber, "the Firebase project number, digits only (--project-number, \"projectNumber\"; the Firebase console's project settings show it)")],
        takes: [.projectID, .appIDs],
        refusals: [.audiences: "an App Check token's audience is its project: give the project number (--project-number, \"projectNumber\"), not an audience"],
        note: "apps send this beside the ID token, in X-Firebase-AppCheck; it says which app called, not which user",
        make: { options, _ throws(ConfigurationError) in
            let number = options.projectNumber!
            guard !number.isEmpty, number.utf8.allSatisfy({ (48...57).contains($0) }) else {
                throw ConfigurationError("a firebase-app-check profile needs the Firebase project number, digits only (--project-number, \"projectNumber\"; the Firebase console's project settings show it)")
            }
            if let projectID = options.projectID, projectID.isEmpty {
                throw ConfigurationError("the project ID (--project-id, \"projectId\") must not be empty")
            }
            return .firebaseAppCheck(projectNumber: number, projectID: options.projectID, appIDs: options.appIDs)
        },
        recognizes: { issuer, _ in issuer.hasPrefix(Profile.appCheckIssuerPrefix) },
        suggests: { issuer, _, claims in
            ["--project-number", String(issuer.dropFirst(Profile.appCheckIssuerPrefix.count))] + (claims.subject.map { ["--app-id", $0] } ?? [])
        })
}
