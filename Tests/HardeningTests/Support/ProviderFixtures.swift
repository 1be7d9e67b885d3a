import Foundation
import IDTokenKit
import TestSupport

/// Keys, profiles and claim sets for signing test tokens for every provider at test time.
///
/// Every provider's key set holds one RSA key (`rsa-1`) and one P-256 key (`ec-1`), so that a header can point
/// at a key of the other type. The attacker's keys are fresh keys of their own that the key sets never hold.
enum Fixtures {
    static let rsa = TestSigner(.rs256, kid: "rsa-1")
    static let ec = TestSigner(.es256, kid: "ec-1")
    /// Signs under the legitimate `rsa-1` kid with a key of its own.
    static let attackerRSA = TestSigner(.rs256, kid: "rsa-1")
    static let attackerEC = TestSigner(.es256, kid: "ec-1")
    static let keys = JWKSet(keys: [rsa.publicKey, ec.publicKey])

    /// The time every catalogue token is verified at.
    static let now: Int64 = 1_767_225_600
    static let nowDate = Date(timeIntervalSince1970: Double(now))

    static let projectID = "hardening-7f3a2"
    static let appleClientID = "com.example.hardening"
    static let facebookAppID = "4242424242424242"
    static let oidcIssuer = "https://accounts.hardening.example"
    static let oidcClient = "hardening-client"

    enum Provider: String, CaseIterable, Sendable {
        case firebase, apple, facebook, oidc
    }

    static func profile(_ provider: Provider) -> Profile {
        switch provider {
        case .firebase: .firebase(projectID: projectID)
        case .apple: .apple(clientIDs: [appleClientID])
        case .facebook: .facebook(appID: facebookAppID)
        case .oidc: .oidc(issuers: [oidcIssuer], audiences: [oidcClient], algorithms: [.rs256, .es256])
        }
    }

    static func verifier(_ provider: Provider) -> IDTokenVerifier {
        try! IDTokenVerifier(profile: profile(provider), keys: keys)
    }

    /// A valid claim set for `provider`, as ordered members with raw JSON values, so that a test can replace,
    /// drop, duplicate or add members with any text at all.
    static func claims(_ provider: Provider, subject: String = "user-1234") -> Members {
        var members = Members()
        members["sub"] = quoted(subject)
        members["iat"] = "\(now - 60)"
        members["exp"] = "\(now + 3600)"
        switch provider {
        case .firebase:
            members["iss"] = quoted("https://securetoken.google.com/" + projectID)
            members["aud"] = quoted(projectID)
            members["auth_time"] = "\(now - 120)"
            members["firebase"] = #"{"identities":{"email":["user@example.com"]},"sign_in_provider":"password"}"#
        case .apple:
            members["iss"] = quoted("https://appleid.apple.com")
            members["aud"] = quoted(appleClientID)
            members["email_verified"] = "true"
        case .facebook:
            members["iss"] = quoted("https://www.facebook.com")
            members["aud"] = quoted(facebookAppID)
            members["jti"] = quoted("jti-5f8e2a")
        case .oidc:
            members["iss"] = quoted(oidcIssuer)
            members["aud"] = quoted(oidcClient)
        }
        return members
    }

    /// A JSON string literal for `text` (quotes and backslashes escaped; other characters as they are).
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// A header with `alg` and `kid` (nil leaves a member out) and more members as raw JSON text.
    static func header(alg: String? = "RS256", kid: String? = "rsa-1", _ extra: String = "") -> String {
        var members: [String] = []
        if let alg { members.append("\"alg\":\(quoted(alg))") }
        if let kid { members.append("\"kid\":\(quoted(kid))") }
        if !extra.isEmpty { members.append(extra) }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// A token for `provider` signed by `signer` (default: the provider's RSA key).
    static func token(_ provider: Provider, header: String? = nil, claims: Members? = nil, signer: TestSigner = rsa) -> String {
        let header = header ?? Fixtures.header(alg: signer.algorithm.rawValue, kid: signer.kid)
        return signer.token(header: header, payload: (claims ?? Fixtures.claims(provider)).json)
    }

    /// `header.payload.signature` with each part base64url-encoded exactly as given.
    static func assemble(_ header: String, _ payload: String, _ signature: [UInt8]) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode(signature)
    }
}

/// JSON object members in order, with raw JSON values; setting a member that exists replaces it in place.
struct Members {
    /// Each member's name as JSON text (quoted, possibly with escapes) and its value as JSON text.
    private(set) var list: [(name: String, value: String)] = []

    subscript(name: String) -> String? {
        get { list.first { $0.name == Fixtures.quoted(name) }?.value }
        set {
            if let index = list.firstIndex(where: { $0.name == Fixtures.quoted(name) }) {
                if let newValue { list[index].value = newValue } else { list.remove(at: index) }
            } else if let newValue {
                list.append((Fixtures.quoted(name), newValue))
            }
        }
    }

    /// Adds a member even if one of that name exists (for duplicate-member attacks).
    mutating func append(_ name: String, _ value: String) { list.append((Fixtures.quoted(name), value)) }

    /// Adds a member whose name is written as the JSON text `nameJSON` (for names spelt with escapes).
    mutating func append(nameJSON: String, _ value: String) { list.append((nameJSON, value)) }

    func with(_ name: String, _ value: String?) -> Members {
        var copy = self
        copy[name] = value
        return copy
    }

    var json: String { "{" + list.map { "\($0.name):\($0.value)" }.joined(separator: ",") + "}" }
}

extension Outcome {
    /// The synchronous verifier's verdict on `token` at `now` with the key set `keys`.
    static func of(_ verifier: IDTokenVerifier, _ token: String, keys: JWKSet, now: Date = Fixtures.nowDate,
                   nonce: Nonce? = nil) -> Outcome {
        do {
            _ = try verifier.verify(token, keys: keys, now: now, nonce: nonce)
            return .accepted
        } catch {
            return .rejected(error.code)
        }
    }
}
