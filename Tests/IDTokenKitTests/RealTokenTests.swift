import Foundation
import IDTokenKit
import Testing

/// Real provider tokens (Vectors/external/providers/, see SOURCES.md there): each verifies inside its
/// validity with its provider's keys and fails as expired later, with one signature byte changed, and for
/// another audience; Firebase tokens whose key was never published give unknown_key; the Facebook iOS SDK vector
/// verifies with its certificate and not with the other.
@Suite struct RealTokenTests {
    static let cases = VectorCase.load("external/providers/cases.json")

    @Test(arguments: cases) func realToken(_ test: VectorCase) async throws {
        try await VectorRunner.run(test)
    }

    /// Every token with a known key has all four verdicts, so the case file cannot quietly lose one.
    @Test func everyVerifiableTokenHasTheFourVerdicts() throws {
        var kinds: [String: Set<String>] = [:]
        for c in Self.cases {
            let parts = c.id.split(separator: "/")
            kinds[parts.dropLast().joined(separator: "/"), default: []].insert(String(parts.last!))
        }
        // Tokens that verify inside their validity (the Apple server-to-server notification does not: no sub).
        let verifiable = Self.cases.filter { $0.id.hasSuffix("/inside-validity") && $0.json["expect"]?["valid"]?.bool == true }
            .map { String($0.id.dropLast("/inside-validity".count)) }
        #expect(verifiable.count >= 30)
        for token in verifiable {
            let seen = kinds[token] ?? []
            #expect(seen.isSuperset(of: ["inside-validity", "expired", "bad-signature", "wrong-audience"]), "\(token): \(seen.sorted())")
        }
        let unknown = Self.cases.filter { $0.id.hasPrefix("real/firebase/") && $0.id.hasSuffix("/unknown-key") }
        #expect(unknown.count == 2)
        #expect(Self.cases.contains { $0.id == "real/facebook-ios-sdk/inside-validity" })
        #expect(Self.cases.contains { $0.id == "real/facebook-ios-sdk/incorrect-certificate" })
    }

    static func verify(_ id: String) async throws -> VerifiedToken {
        let c = try #require(cases.first { $0.id == id }).json
        let verifier = try IDTokenVerifier(profile: try VectorProfile.make(try #require(c["profile"])),
                                           keys: try VectorFiles.keySet(try #require(c["keys"])))
        return try await verifier.verify(try #require(c["token"]?.string),
                                         now: Date(timeIntervalSince1970: Double(try #require(c["at"]?.int64))))
    }

    @Test func firebaseTypedClaims() async throws {
        let id = try #require(Self.cases.first { $0.id.hasPrefix("real/firebase/prestashopcorp-") && $0.id.hasSuffix("/inside-validity") }).id
        let token = try await Self.verify(id)
        #expect(token.provider == .firebase)
        #expect(token.firebase.signInProvider == "custom")
        #expect(token.firebase.uid == token.subject)
        #expect(token.kid == "4e00e8fe5f2c88cf0c7044f307f7e739788e4f1e")
        #expect(token.algorithm == .rs256)
    }

    @Test func appleStringBooleansAreRead() async throws {
        // The hivegroupinc token (2021) writes email_verified and is_private_email as strings.
        let id = try #require(Self.cases.first { c in
            c.id.hasSuffix("/inside-validity") && c.id.hasPrefix("real/apple/") &&
                (c.json["profile"]?["client_ids"]?.array?.first?.string == "service.com.hivegroupinc.cardxchange")
        }).id
        let token = try await Self.verify(id)
        #expect(token.apple.emailVerified == true)
        #expect(token.apple.isPrivateEmail == true)
        #expect(token.claims["email_verified"]?.kind == .string)
        #expect(token.apple.email?.hasSuffix("@privaterelay.appleid.com") == true)
    }

    @Test func facebookSDKVectorClaims() async throws {
        let token = try await Self.verify("real/facebook-ios-sdk/inside-validity")
        #expect(token.facebook.name == "Test User")
        #expect(token.facebook.nonce == "some_nonce")
        #expect(token.facebook.picture == "https://www.facebook.com/some_picture")
        #expect(token.kid == nil)
    }
}
