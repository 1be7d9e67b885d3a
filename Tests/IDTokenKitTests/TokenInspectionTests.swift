import Foundation
import IDTokenKit
import Testing

/// `idtoken inspect`'s reading (``TokenInspection``): the kind of every vector, and, against the vector's own
/// profile, the same refusal the verifier gives wherever that refusal reads only the header and the claims.
@Suite struct TokenInspectionTests {
    /// The codes the verifier gives from the header and claims alone, after the signature: what an inspection,
    /// which checks no signature and knows no keys, must find first.
    static let claimCodes: Set<String> = ["wrong_audience", "wrong_issuer", "expired", "not_yet_valid", "issued_in_future",
                                          "invalid_claim", "tenant_mismatch", "provider_not_allowed", "revoked"]

    @Test func theValidVectorOfEachFileHasItsKind() throws {
        let expected: [String: TokenInspection.Kind] = [
            "firebase": .firebase, "firebase-session": .firebaseSession, "apple": .apple, "facebook": .facebook,
            "oidc": .oidc, "firebase-app-check": .firebaseAppCheck, "apple-notification": .appleNotification, "google": .google,
            "github-actions": .githubActions, "cognito": .cognito, "entra": .entra, "cognito-access": .cognitoAccess,
        ]
        for file in GeneratedVectorTests.files {
            let valid = try #require(VectorCase.load("generated/\(file).json").first { $0.id == "\(file)/valid" })
            let inspection = TokenInspection(try #require(valid.json["token"]?.string), now: 0)
            #expect(inspection.kind == expected[file], "\(file)")
            #expect(inspection.kind.provider?.rawValue == file)
            // The suggested options make a profile that the token's claims satisfy (at its own `at`).
            let options = inspection.suggestedOptions
            #expect(Array(options.prefix(2)) == ["--provider", file], "\(file): \(options)")
            #expect(inspection.findings.isEmpty)
        }
    }

    @Test func otherKindsAreNamed() throws {
        let custom = Self.unsigned(["iss": "svc@my-app.iam.gserviceaccount.com", "sub": "svc@my-app.iam.gserviceaccount.com",
                                    "aud": "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit",
                                    "uid": "user-1", "iat": 1_767_225_600, "exp": 1_767_229_200])
        #expect(TokenInspection(custom, now: 1_767_225_700).kind == .firebaseCustom)
        #expect(TokenInspection(Self.unsigned(["iss": "accounts.google.com", "aud": "x", "sub": "1", "exp": 1]), now: 0).kind == .google)
        #expect(TokenInspection(Self.unsigned(["iss": "https://limited.facebook.com", "aud": "1", "sub": "2", "exp": 1]), now: 0).kind == .facebook)
        #expect(TokenInspection(Self.unsigned(["sub": "no issuer", "exp": 1]), now: 0).kind == .unknown)
        #expect(TokenInspection("EAAGm0PX4ZCpsBAKZC0ZCqZBvQ7ZB8ZAZCZBZC0ZD", now: 0).kind == .facebookAccessToken)
        #expect(TokenInspection("EAA too short", now: 0).kind == .unknown)
        #expect(TokenInspection("", now: 0).kind == .unknown)
        #expect(TokenInspection("a.b.c", now: 0).kind == .unknown)
        // Every kind has a stable name, and only the verifiable ones a provider.
        #expect(Set(TokenInspection.Kind.allCases.map(\.rawValue)).count == TokenInspection.Kind.allCases.count)
        #expect(TokenInspection.Kind.allCases.compactMap(\.provider).count == Provider.allCases.count)
    }

    @Test func timesAreSaidInWords() {
        let token = Self.unsigned(["iss": "https://appleid.apple.com", "aud": "a", "sub": "s", "iat": 1_000_040, "exp": 1_000_000 - 3 * 3600])
        let inspection = TokenInspection(token, now: 1_000_000)
        #expect(inspection.times.map(\.words) == ["issued 40 s in the future", "expired 3 h ago"])
    }

    @Test func aTokenOfAnotherKindGetsAdviceNamingBoth() throws {
        let google = try #require(VectorCase.load("generated/google.json").first { $0.id == "google/valid" })
        let inspection = TokenInspection(try #require(google.json["token"]?.string), now: 0, profile: .firebase(projectID: "my-app"))
        let finding = try #require(inspection.findings.first)
        #expect(inspection.findings.count == 1)
        #expect(finding.code == .wrongIssuer)
        #expect(finding.message.contains("this is a Google ID token, not a Firebase ID token"))
        #expect(finding.message.contains("signInWithCredential"))
        #expect(finding.message.contains("--provider google"))
    }

    static let cases = GeneratedVectorTests.cases.filter { test in
        guard let token = test.json["token"]?.string, !token.isEmpty, test.json["keys"]?.string != nil,
              test.json["nonce"] == nil || test.json["nonce"] == .null, test.json["replay"] == nil else { return false }
        guard let code = test.json["expect"]?["error"]?.string else { return true }
        return claimCodes.contains(code) || (code == "unsupported_header" && test.json["expect"]?["claim"]?.string == "typ")
    }

    /// Against the vector's profile: a valid token has no finding; a refused one's first finding is the
    /// verifier's refusal, code and claim — unless the token is of another kind than the profile's, which is then
    /// the finding.
    @Test(arguments: cases) func findingsAgreeWithTheVerifier(_ test: VectorCase) throws {
        let profile = try VectorProfile.make(try #require(test.json["profile"]))
        let token = try #require(test.json["token"]?.string)
        let inspection = TokenInspection(token, now: Double(try #require(test.json["at"]?.int64)), profile: profile)
        guard let expected = test.json["expect"]?["error"]?.string else {
            #expect(inspection.findings.isEmpty, "\(test.id): \(inspection.findings.map(\.message))")
            return
        }
        let first = try #require(inspection.findings.first, "\(test.id): no finding, the verifier says \(expected)")
        if inspection.kind.provider == profile.provider {
            #expect(first.code.rawValue == expected, "\(test.id): \(first.code) \(first.message)")
            if let claim = test.json["expect"]?["claim"]?.string { #expect(first.claim == claim, "\(test.id)") }
        } else {
            #expect(first.code == .wrongIssuer && first.message.contains("not a \(profile.provider.tokenName)"), "\(test.id): \(first.message)")
        }
    }

    static func unsigned(_ claims: [String: Any]) -> String {
        func segment(_ object: [String: Any]) -> String {
            Base64URL.encode(Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
        }
        return segment(["alg": "RS256", "kid": "k"]) + "." + segment(claims) + ".c2ln"
    }
}
