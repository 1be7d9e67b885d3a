// Shared by the Vapor and Hummingbird integration tests (a symbolic link in each test target): the repository's
// generated vectors, read with Foundation (test code, not the verification path).
import Foundation
import IDTokenKit
import NIOCore
import NIOPosix

/// One case of `Vectors/generated/<provider>.json`.
struct VectorCase: Sendable {
    let id: String
    let token: String
    /// The canonical JSON of the profile: cases with equal text share a verifier.
    let profileKey: String
    let profile: Profile
    /// The key set file, when the case names one.
    let keysPath: String?
    /// The key set, when the case carries it inline.
    let inlineKeys: String?
    let at: Double
    /// The raw nonce and how the token carries it (`sha256hex` or `exact`).
    let nonce: (value: String, mode: String)?
    /// The expected code; nil for a valid token.
    let error: String?
    /// Whether the case is about a token the replay cache has seen.
    let isReplayCase: Bool

    /// The profile and key set: cases with equal keys share a verifier.
    var verifierKey: String { profileKey + " " + (keysPath ?? inlineKeys ?? "") }

    /// The case's key set (nil for the `keys_unavailable` cases, which have none).
    func keySet() throws -> JWKSet? {
        if let keysPath { return try KeySetFile.load(keysPath) }
        if let inlineKeys { return try JWKSet.parse(Array(inlineKeys.utf8)) }
        return nil
    }

    var expectedNonce: Nonce? {
        nonce.map { $0.mode == "exact" ? .exact($0.value) : .sha256Hex($0.value) }
    }
}

enum Vectors {
    static let directory = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("../../Vectors").standardized.path

    static func cases(_ provider: String) throws -> [VectorCase] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/generated/\(provider).json"))
        let file = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        return try (file["cases"] as! [[String: Any]]).map { c in
            let profile = c["profile"] as! [String: Any]
            let key = String(decoding: try JSONSerialization.data(withJSONObject: profile, options: .sortedKeys), as: UTF8.self)
            let nonce = (c["nonce"] as? [String: Any]).map { ($0["value"] as! String, $0["mode"] as! String) }
            let expect = c["expect"] as! [String: Any]
            let inline = try (c["keys"] as? [String: Any]).map {
                String(decoding: try JSONSerialization.data(withJSONObject: $0, options: .sortedKeys), as: UTF8.self)
            }
            return VectorCase(id: c["id"] as! String, token: c["token"] as! String, profileKey: key,
                              profile: Self.profile(profile), keysPath: (c["keys"] as? String).map { "\(directory)/\($0)" }, inlineKeys: inline,
                              at: (c["at"] as! NSNumber).doubleValue, nonce: nonce, error: expect["error"] as? String,
                              isReplayCase: c["replay"] != nil)
        }
    }

    static func keys(_ path: String) throws -> JWKSet { try KeySetFile.load(path) }

    static func profile(_ p: [String: Any]) -> Profile {
        var profile: Profile
        let requiredClaims = (p["required_claims"] as? [String: [String]] ?? [:]).sorted(by: { $0.key < $1.key })
        switch p["provider"] as! String {
        case "firebase", "firebase-session":
            let revocation = (p["revoked_before"] as? [String: NSNumber]).map {
                RevocationList($0.mapValues { Date(timeIntervalSince1970: $0.doubleValue) })
            }
            let make = p["provider"] as! String == "firebase" ? Profile.firebase : Profile.firebaseSessionCookie
            profile = make(p["project_id"] as! String, p["tenant"] as? String, p["allowed_sign_in_providers"] as? [String], revocation)
        case "apple":
            profile = .apple(clientIDs: p["client_ids"] as! [String])
        case "facebook":
            profile = .facebook(appID: p["app_id"] as! String, extraIssuers: p["extra_issuers"] as? [String] ?? [])
        case "firebase-app-check":
            profile = .firebaseAppCheck(projectNumber: p["project_number"] as! String, projectID: p["project_id"] as? String,
                                        appIDs: p["app_ids"] as? [String] ?? [])
        case "apple-notification":
            profile = .appleNotification(clientIDs: p["client_ids"] as! [String])
        case "google":
            profile = .google(clientIDs: p["client_ids"] as! [String], hostedDomains: p["hosted_domains"] as? [String] ?? [])
        case "github-actions":
            // The constructor takes the required claims, without which it accepts no profile.
            profile = try! .githubActions(audiences: p["audiences"] as! [String], requiredClaims: requiredClaims.map { .init(name: $0.key, values: $0.value) })
        case "entra":
            profile = try! .entra(clientIDs: p["audiences"] as! [String], tenants: p["tenants"] as? [String] ?? [],
                                  anyTenant: p["any_tenant"] as? Bool ?? false, v1: p["entra_v1"] as? Bool ?? false)
        case "cognito-access":
            profile = .cognitoAccess(issuer: (p["issuers"] as! [String])[0], clientIDs: p["audiences"] as! [String])
        case "cognito":
            profile = .cognito(issuer: (p["issuers"] as! [String])[0], clientIDs: p["audiences"] as! [String])
        default:
            let algorithms = (p["algorithms"] as? [String]).map { Set($0.compactMap(JWSAlgorithm.init(rawValue:))) }
            profile = .oidc(issuers: p["issuers"] as! [String], audiences: p["audiences"] as! [String],
                            algorithms: algorithms ?? Profile.oidcDefaultAlgorithms)
        }
        if let leeway = p["leeway"] as? NSNumber { profile = profile.withLeeway(Leeway(seconds: leeway.intValue)) }
        for (name, values) in requiredClaims where p["provider"] as! String != "github-actions" {
            profile.rules.append(AllowedValuesRule(name, oneOf: values, required: true, matching: .patterns))
        }
        return profile
    }

    /// What the integrations must answer for a code: the status, and the RFC 6750 `error` of the challenge. Written
    /// out here rather than read from `HTTPRefusal`, so that a change to the shared mapping shows up as a failure.
    static func expectedStatus(_ code: String) -> (status: Int, bearerError: String?) {
        switch code {
        case "tenant_mismatch", "provider_not_allowed", "revoked": (403, "insufficient_scope")
        case "keys_unavailable": (503, nil)
        default: (401, "invalid_token")
        }
    }

    /// The `sub` of a token's payload, read independently of the library (nil when the payload is not JSON).
    static func subject(of token: String) -> String? {
        var part = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while part.count % 4 != 0 { part += "=" }
        guard let data = Data(base64Encoded: part),
              let payload = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return payload["sub"] as? String
    }

    /// A loopback port that was free a moment ago and has nothing listening now.
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }
}
