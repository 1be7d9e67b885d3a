import Foundation
import IDTokenKit

/// Builds a ``Profile`` from a vector's `profile` object (Vectors/schema.json).
enum VectorProfile {
    static func make(_ json: JSONTree) throws -> Profile {
        guard let provider = json["provider"]?.string else { throw VectorError("profile without provider") }
        var profile: Profile
        let requiredClaims = (json["required_claims"]?.objectMembers ?? []).map { (key: $0.key, value: $0.value.array?.compactMap(\.string) ?? []) }
        switch provider {
        case "firebase", "firebase-session":
            let project = json["project_id"]?.string ?? ""
            let tenant = json["tenant"]?.string
            let allowed = json["allowed_sign_in_providers"]?.array?.compactMap(\.string)
            var revocation: RevocationList?
            if let revoked = json["revoked_before"]?.objectMembers {
                revocation = RevocationList(Dictionary(uniqueKeysWithValues: revoked.map {
                    ($0.key, Date(timeIntervalSince1970: $0.value.double ?? 0))
                }))
            }
            profile = provider == "firebase"
                ? .firebase(projectID: project, tenant: tenant, allowedSignInProviders: allowed, revocation: revocation)
                : .firebaseSessionCookie(projectID: project, tenant: tenant, allowedSignInProviders: allowed, revocation: revocation)
        case "apple":
            profile = .apple(clientIDs: json["client_ids"]?.array?.compactMap(\.string) ?? [])
        case "facebook":
            profile = .facebook(appID: json["app_id"]?.string ?? "",
                                extraIssuers: json["extra_issuers"]?.array?.compactMap(\.string) ?? [])
        case "oidc":
            let algorithms = json["algorithms"]?.array?.compactMap { $0.string.flatMap(JWSAlgorithm.init(rawValue:)) }
            profile = .oidc(issuers: json["issuers"]?.array?.compactMap(\.string) ?? [],
                            audiences: json["audiences"]?.array?.compactMap(\.string) ?? [],
                            algorithms: algorithms.map(Set.init) ?? Profile.oidcDefaultAlgorithms)
        case "firebase-app-check":
            profile = .firebaseAppCheck(projectNumber: json["project_number"]?.string ?? "", projectID: json["project_id"]?.string,
                                        appIDs: json["app_ids"]?.array?.compactMap(\.string) ?? [])
        case "apple-notification":
            profile = .appleNotification(clientIDs: json["client_ids"]?.array?.compactMap(\.string) ?? [])
        case "google":
            profile = .google(clientIDs: json["client_ids"]?.array?.compactMap(\.string) ?? [],
                              hostedDomains: json["hosted_domains"]?.array?.compactMap(\.string) ?? [])
        case "github-actions":
            // The constructor takes the required claims, without which it accepts no profile.
            profile = try .githubActions(audiences: json["audiences"]?.array?.compactMap(\.string) ?? [],
                                         requiredClaims: requiredClaims.map { .init(name: $0.key, values: $0.value) })
        case "entra":
            profile = try .entra(clientIDs: json["audiences"]?.array?.compactMap(\.string) ?? [],
                                 tenants: json["tenants"]?.array?.compactMap(\.string) ?? [],
                                 anyTenant: json["any_tenant"]?.bool ?? false, v1: json["entra_v1"]?.bool ?? false)
        case "cognito-access":
            profile = .cognitoAccess(issuer: json["issuers"]?.array?.first?.string ?? "", clientIDs: json["audiences"]?.array?.compactMap(\.string) ?? [])
        case "cognito":
            profile = .cognito(issuer: json["issuers"]?.array?.first?.string ?? "", clientIDs: json["audiences"]?.array?.compactMap(\.string) ?? [])
        default:
            throw VectorError("unknown provider \(provider)")
        }
        if let requireKid = json["require_kid"]?.bool { profile.requiresKeyID = requireKid }
        if let leeway = json["leeway"]?.int64 { profile.leeway = Leeway(seconds: Int(leeway)) }
        for (name, values) in requiredClaims where provider != "github-actions" {
            profile.rules.append(AllowedValuesRule(name, oneOf: values, required: true, matching: .patterns))
        }
        return profile
    }

    static func nonce(_ json: JSONTree?) -> Nonce? {
        guard let json, let mode = json["mode"]?.string, let value = json["value"]?.string else { return nil }
        return mode == "sha256hex" ? .sha256Hex(value) : .exact(value)
    }
}
