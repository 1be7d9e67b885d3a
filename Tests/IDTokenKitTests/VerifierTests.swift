import Foundation
import IDTokenKit
import Testing

/// The verifier's behaviour around the pipeline: key refresh, the replay entry, configuration checks, typed
/// claims and messages. Tokens come from the generated vectors.
@Suite struct VerifierTests {
    static func vector(_ id: String) throws -> (token: String, profile: Profile, keys: JWKSet, at: Date) {
        let file = String(id.split(separator: "/")[0])
        let c = try #require(VectorCase.load("generated/\(file).json").first { $0.id == id }).json
        return (try #require(c["token"]?.string), try VectorProfile.make(try #require(c["profile"])),
                try VectorFiles.keySet(try #require(c["keys"])), Date(timeIntervalSince1970: Double(try #require(c["at"]?.int64))))
    }

    @Test func twoLineAPI() async throws {
        let v = try Self.vector("firebase/valid")
        let verifier = try IDTokenVerifier(profile: .firebase(projectID: "idtk-demo-7f3a2"), keys: StaticKeySource(v.keys))
        let token = try await verifier.verify(v.token, now: v.at)
        #expect(token.firebase.signInProvider == "google.com")
        #expect(token.firebase.identities["email"] == ["ana.garcia@example.com"])
        #expect(token.firebase.identities["google.com"]?.count == 1)
        #expect(token.firebase.name == "Ana Luísa García")
        #expect(token.issuer == "https://securetoken.google.com/idtk-demo-7f3a2")
        #expect(token.claims.audience == ["idtk-demo-7f3a2"])
        #expect(token.expiresAt == token.claims.issuedAt! + 3600)
    }

    @Test func noRefreshWhenTheKeyIsThere() async throws {
        let v = try Self.vector("firebase/valid")
        let source = RotatingKeySource(initial: v.keys, refreshed: .empty)
        let verifier = try IDTokenVerifier(profile: v.profile, keys: source)
        _ = try await verifier.verify(v.token, now: v.at)
        #expect(source.refreshes.isEmpty)
    }

    @Test func unknownKidRefreshesOnceThenVerifies() async throws {
        let v = try Self.vector("firebase/valid")
        let source = RotatingKeySource(initial: .empty, refreshed: v.keys)
        let verifier = try IDTokenVerifier(profile: v.profile, keys: source)
        let token = try await verifier.verify(v.token, now: v.at)
        #expect(source.refreshes == [token.kid])
    }

    @Test func unknownKidAfterRefreshIsUnknownKey() async throws {
        let v = try Self.vector("firebase/kid-unknown")
        let source = RotatingKeySource(initial: v.keys, refreshed: v.keys)
        let verifier = try IDTokenVerifier(profile: v.profile, keys: source)
        await #expect(throws: TokenError(.unknownKey, claim: "kid", "")) { try await verifier.verify(v.token, now: v.at) }
        #expect(source.refreshes == ["rotated-away-0001"])
    }

    @Test func missingKidDoesNotRefresh() async throws {
        let v = try Self.vector("firebase/kid-missing")
        let source = RotatingKeySource(initial: v.keys, refreshed: v.keys)
        let verifier = try IDTokenVerifier(profile: v.profile, keys: source)
        await #expect(throws: TokenError(.unknownKey, claim: "kid", "")) { try await verifier.verify(v.token, now: v.at) }
        #expect(source.refreshes.isEmpty)
    }

    @Test func noSnapshotLoadsFirst() async throws {
        let v = try Self.vector("apple/valid")
        let source = RotatingKeySource(initial: nil, refreshed: v.keys)
        let verifier = try IDTokenVerifier(profile: v.profile, keys: source)
        _ = try await verifier.verify(v.token, now: v.at)
        #expect(source.refreshes == [nil])
    }

    @Test func replayEntryIsIssuerAndSignedContentDigest() async throws {
        let v = try Self.vector("facebook/valid")
        let cache = TestReplayCache()
        let verifier = try IDTokenVerifier(profile: v.profile, keys: v.keys, replayCache: cache)
        let token = try await verifier.verify(v.token, now: v.at)
        let entry = try #require(cache.recorded.first)
        #expect(cache.recorded.count == 1)
        #expect(entry.issuer == "https://www.facebook.com")
        let parts = v.token.split(separator: ".")
        #expect(entry.tokenDigest == SHA256.hash(utf8: "\(parts[0]).\(parts[1])"))
        #expect(entry.expiresAt == Int64(token.expiresAt) + 60)
        await #expect(throws: TokenError(.replayed, "")) { try await verifier.verify(v.token, now: v.at) }
    }

    /// An ECDSA signature (r, s) also verifies as (r, n − s). Re-forming the signature of an accepted ES256 token
    /// must not make it new to the replay cache.
    @Test func aReformedECDSASignatureIsStillAReplay() async throws {
        let v = try Self.vector("oidc/valid")
        let parts = v.token.split(separator: ".").map(String.init)
        let raw = try #require(Base64URL.decode(parts[2]))
        #expect(raw.count == 64)
        // n − s over P-256's group order, big-endian.
        let n: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                          0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51]
        var negated = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for k in stride(from: 31, through: 0, by: -1) {
            let d = Int(n[k]) - Int(raw[32 + k]) - borrow
            negated[k] = UInt8((d + 256) % 256)
            borrow = d < 0 ? 1 : 0
        }
        let reformed = parts[0] + "." + parts[1] + "." + Base64URL.encode(Array(raw[..<32]) + negated)
        #expect(reformed != v.token)
        let verifier = try IDTokenVerifier(profile: v.profile, keys: v.keys, replayCache: MemoryReplayCache(capacity: 100))
        // Both forms verify on their own…
        let plain = try IDTokenVerifier(profile: v.profile, keys: v.keys)
        _ = try plain.verify(reformed, keys: v.keys, now: v.at)
        // …but they are one token to the replay cache.
        _ = try await verifier.verify(v.token, now: v.at)
        await #expect(throws: TokenError(.replayed, "")) { try await verifier.verify(reformed, now: v.at) }
    }

    @Test func aFailedTokenTakesNoReplaySlot() async throws {
        let v = try Self.vector("facebook/aud-wrong")
        let cache = TestReplayCache()
        let verifier = try IDTokenVerifier(profile: v.profile, keys: v.keys, replayCache: cache)
        await #expect(throws: TokenError(.wrongAudience, claim: "aud", "")) { try await verifier.verify(v.token, now: v.at) }
        #expect(cache.recorded.isEmpty)
    }

    @Test func synchronousVerifyRefusesAnAsyncOnlyReplayCache() async throws {
        let v = try Self.vector("oidc/valid")
        let verifier = try IDTokenVerifier(profile: v.profile, keys: v.keys, replayCache: AsyncOnlyReplayCache())
        // The cache could not say: the store's failure, never a replay.
        #expect(throws: TokenError(.replayStoreUnavailable, "")) { try verifier.verify(v.token, keys: v.keys, now: v.at) }
        _ = try await verifier.verify(v.token, now: v.at)
        await #expect(throws: TokenError(.replayed, "")) { try await verifier.verify(v.token, now: v.at) }
    }

    @Test func concurrentPresentationsAcceptOnce() async throws {
        let v = try Self.vector("apple/valid")
        let verifier = try IDTokenVerifier(profile: v.profile, keys: v.keys, replayCache: TestReplayCache())
        let accepted = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 { group.addTask { (try? await verifier.verify(v.token, now: v.at)) != nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(accepted == 1)
    }

    @Test func configurationIsCheckedWhenTheVerifierIsBuilt() throws {
        #expect(throws: ConfigurationError.self) { try IDTokenVerifier(profile: .firebase(projectID: ""), keys: .empty) }
        #expect(throws: ConfigurationError.self) { try IDTokenVerifier(profile: .apple(clientIDs: []), keys: .empty) }
        #expect(throws: ConfigurationError.self) {
            try IDTokenVerifier(profile: .facebook(appID: "1").withLeeway(Leeway(seconds: 301)), keys: .empty)
        }
        #expect(throws: ConfigurationError.self) {
            try IDTokenVerifier(profile: .oidc(issuers: ["https://a"], audiences: ["b"]).withLeeway(Leeway(seconds: -1)), keys: .empty)
        }
        _ = try IDTokenVerifier(profile: .oidc(issuers: ["https://a"], audiences: ["b"]).withLeeway(Leeway(seconds: 300)), keys: .empty)
        _ = try IDTokenVerifier(profile: .facebook(appID: "1").withLeeway(.zero), keys: .empty)
    }

    @Test func profilesCarryTheirKeyURLsAndPins() {
        #expect(Profile.firebase(projectID: "p").keysURL == "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com")
        #expect(Profile.firebase(projectID: "p").issuers == ["https://securetoken.google.com/p"])
        #expect(Profile.firebaseSessionCookie(projectID: "p").issuers == ["https://session.firebase.google.com/p"])
        #expect(Profile.apple(clientID: "com.a").keysURL == "https://appleid.apple.com/auth/keys")
        #expect(Profile.facebook(appID: "1").keysURL == "https://limited.facebook.com/.well-known/oauth/openid/jwks/")
        #expect(Profile.oidc(issuers: ["https://i"], audiences: ["a"], jwksURL: "https://i/jwks").keysURL == "https://i/jwks")
        for profile in [Profile.firebase(projectID: "p"), .apple(clientID: "a"), .facebook(appID: "1")] {
            #expect(profile.algorithms == [.rs256])
            #expect(profile.requiresKeyID)
            #expect(profile.leeway == .default)
        }
        #expect(Profile.apple(clientID: "a").nonceMode == .sha256Hex)
        #expect(Profile.oidc(issuers: ["https://i"], audiences: ["a"]).algorithms == [.rs256, .es256])
    }

    @Test func messagesSayWhatIsWrongAndWhatToDo() throws {
        let v = try Self.vector("firebase/aud-wrong")
        let verifier = try IDTokenVerifier(profile: v.profile, keys: v.keys)
        do {
            _ = try verifier.verify(v.token, keys: v.keys, now: v.at)
            Issue.record("accepted a token for another audience")
        } catch {
            #expect(error.code == .wrongAudience)
            #expect(error.message.contains("incorrect \"aud\" (audience) claim"))
            #expect(error.message.contains("expected \"idtk-demo-7f3a2\" but got \"someone-elses-app\""))
            #expect(error.message.contains("same Firebase project"))
        }
        let expired = try Self.vector("apple/exp-boundary-at")
        let expiredVerifier = try IDTokenVerifier(profile: expired.profile, keys: expired.keys)
        do {
            _ = try expiredVerifier.verify(expired.token, keys: expired.keys, now: expired.at)
            Issue.record("accepted an expired token")
        } catch {
            #expect(error.code == .expired)
            #expect(error.message.contains("2026-01-04T00:00:00Z"), "\(error.message)")
            #expect(error.message.contains("60 s leeway"))
        }
    }

    @Test func typedClaimsOfAppleAndFacebook() throws {
        let apple = try Self.vector("apple/valid-string-booleans")
        let appleToken = try IDTokenVerifier(profile: apple.profile, keys: apple.keys).verify(apple.token, keys: apple.keys, now: apple.at)
        #expect(appleToken.apple.emailVerified == true)
        #expect(appleToken.apple.isPrivateEmail == false)
        #expect(appleToken.apple.nonceSupported == true)
        #expect(appleToken.apple.realUserStatus == .likelyReal)

        let fb = try Self.vector("facebook/valid-escaped-slashes")
        let fbToken = try IDTokenVerifier(profile: fb.profile, keys: fb.keys).verify(fb.token, keys: fb.keys, now: fb.at)
        #expect(fbToken.facebook.name == "Zoë Åberg")
        #expect(fbToken.facebook.givenName == "Zoë")
        #expect(fbToken.facebook.familyName == "Åberg")
        #expect(fbToken.facebook.userAgeRange == FacebookClaims.AgeRange(min: 21, max: nil))
        #expect(fbToken.facebook.userHometown?.name == "Göteborg, Sweden")
        #expect(fbToken.facebook.userLocation?.name == "Stockholm, Sweden")
        #expect(fbToken.facebook.userFriends?.count == 2)
        #expect(fbToken.facebook.userLink?.hasPrefix("https://www.facebook.com/app_scoped_user_id/") == true)
        #expect(fbToken.facebook.picture?.contains("\\/") == false)
        #expect(fbToken.facebook.jti?.isEmpty == false)
        #expect(fbToken.facebook.userGender == "female")
        #expect(fbToken.facebook.userBirthday == "01/31/1990")
    }

    @Test func firebaseCustomAndNestedClaims() throws {
        let v = try Self.vector("firebase/valid-escaped-slashes-unicode")
        let token = try IDTokenVerifier(profile: v.profile, keys: v.keys).verify(v.token, keys: v.keys, now: v.at)
        #expect(token.firebase.customClaim("role")?.string == "editor")
        let org = try #require(token.firebase.customClaim("org")?.object)
        #expect(org["teams"]?.array?.compactMap(\.string) == ["blue", "équipe"])
        #expect(org["limits"]?.object?["nested"]?.object?["deep"]?.array?.count == 2)
        #expect(Set(token.firebase.customClaimNames) == ["role", "org"])
        #expect(token.firebase.customClaim("sub") == nil)
        #expect(token.issuer == "https://securetoken.google.com/idtk-demo-7f3a2")
        #expect(token.firebase.picture?.hasPrefix("https://lh3.googleusercontent.com/") == true)
    }
}
