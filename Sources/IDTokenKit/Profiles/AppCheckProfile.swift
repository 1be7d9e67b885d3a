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
