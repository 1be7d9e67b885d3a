// Shared by the Vapor and Hummingbird sign-in examples (a symbolic link in each): the user a sign-in answers with,
// and the demo's verifiers on the repository's test keys.
import Foundation
import IDTokenKit

/// What a sign-in route answers: the verified token's user, read through the typed claims of its provider.
public struct SignInUser: Codable, Equatable, Sendable {
    public var provider: String
    public var subject: String
    public var issuer: String
    public var email: String?
    public var emailVerified: Bool?
    public var name: String?
    /// Firebase: how the user signed in (`google.com`, `apple.com`…).
    public var signInProvider: String?
    public var expiresAt: Double

    public init(_ token: VerifiedToken) {
        provider = token.provider.rawValue
        subject = token.subject
        issuer = token.issuer
        expiresAt = token.expiresAt
        switch token.provider {
        case .apple:
            email = token.apple.email
            emailVerified = token.apple.emailVerified
        case .facebook:
            email = token.facebook.email
            name = token.facebook.name
        case .firebase, .firebaseSessionCookie:
            email = token.firebase.email
            emailVerified = token.firebase.emailVerified
            name = token.firebase.name
            signInProvider = token.firebase.signInProvider
        default:
            email = token.claims.email
            name = token.claims.name
        }
    }
}

/// The examples' providers: from the environment, or the repository's test keys when none is configured.
enum SignInDemo {
    /// The header the examples read a raw nonce from.
    static let nonceHeader = "X-IDToken-Nonce"

    /// The profiles `FIREBASE_PROJECT_ID`, `APPLE_CLIENT_ID` (comma-separated) and `FACEBOOK_APP_ID` ask for, by name.
    static func configuredProfiles(_ environment: [String: String]) -> [(name: String, profile: Profile)] {
        var profiles: [(String, Profile)] = []
        if let project = environment["FIREBASE_PROJECT_ID"] { profiles.append(("firebase", .firebase(projectID: project))) }
        if let clients = environment["APPLE_CLIENT_ID"] {
            profiles.append(("apple", .apple(clientIDs: clients.split(separator: ",").map(String.init))))
        }
        if let appID = environment["FACEBOOK_APP_ID"] { profiles.append(("facebook", .facebook(appID: appID))) }
        return profiles
    }

    /// `Vectors/` of the clone the example was built from.
    static func vectorsDirectory(_ environment: [String: String], file: String = #filePath) -> String {
        environment["IDTK_VECTORS"]
            ?? URL(fileURLWithPath: file).resolvingSymlinksInPath().deletingLastPathComponent()
                .appendingPathComponent("../../Vectors").standardized.path
    }

    /// The test profiles of `Vectors/generated/` with their keys, each judged at the time its provider's test
    /// tokens were made, so that the bundled tokens sign in.
    static func testVerifiers(vectors: String) throws -> [(name: String, verifier: IDTokenVerifier, at: Date)] {
        let keysets = vectors + "/generated/keysets/"
        return [
            ("firebase", try IDTokenVerifier(profile: .firebase(projectID: "idtk-demo-7f3a2"),
                                             keys: try KeySetFile.load(keysets + "firebase_jwks.json")),
             Date(timeIntervalSince1970: 1_767_225_720)),
            ("apple", try IDTokenVerifier(profile: .apple(clientIDs: ["com.example.idtk.ios", "com.example.idtk.web"]),
                                          keys: try KeySetFile.load(keysets + "apple_jwks.json")),
             Date(timeIntervalSince1970: 1_767_398_520)),
            ("facebook", try IDTokenVerifier(profile: .facebook(appID: "1234567890123456"),
                                             keys: try KeySetFile.load(keysets + "facebook_jwks.json")),
             Date(timeIntervalSince1970: 1_767_484_920)),
        ]
    }
}
