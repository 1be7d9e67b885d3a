import Foundation
import IDTokenKit
import Testing

/// The verification as a value, and the profile's nonce mode: what batch callers and sign-in flows rely on.
@Suite struct VerificationTests {
    @Test("a refused token's header and payload are reported, verified only past the signature")
    func refusalsSayHowFarTheTokenGot() throws {
        let expired = try VerifierTests.vector("firebase/exp-boundary-at")
        let verifier = try IDTokenVerifier(profile: expired.profile, keys: expired.keys)
        guard case .refused(let error, let signatureVerified, let header, let claims) =
                verifier.evaluate(expired.token, keys: expired.keys, at: expired.at) else {
            Issue.record("the expired token was accepted")
            return
        }
        #expect(error.code == .expired)
        #expect(signatureVerified)
        #expect(header?.kid != nil)
        #expect(claims?["iss"]?.string == "https://securetoken.google.com/idtk-demo-7f3a2")

        let forged = try VerifierTests.vector("firebase/signature-flipped-bit")
        let refused = verifier.evaluate(forged.token, keys: forged.keys, at: forged.at)
        #expect(refused.error?.code == .badSignature)
        #expect(!refused.signatureVerified)
        // What the token says about itself, for a report, though nothing vouches for it.
        guard case .refused(_, _, let forgedHeader?, let forgedClaims?) = refused else {
            Issue.record("the forged token's header and claims were not reported")
            return
        }
        #expect(forgedHeader.kid != nil)
        #expect(forgedClaims["sub"] != nil)

        let split = try VerifierTests.vector("firebase/malformed-two-segments")
        guard case .refused(let malformed, false, nil, nil) = verifier.evaluate(split.token, keys: split.keys, at: split.at) else {
            Issue.record("a token that does not split was reported with a header or claims")
            return
        }
        #expect(malformed.code == .malformed)
        // The throwing verify is the same pipeline.
        #expect(throws: malformed) { try verifier.verify(split.token, keys: split.keys, now: split.at) }
    }

    @Test("an accepted token is the one verify returns, from the split token too")
    func acceptedMatchesVerify() throws {
        let v = try VerifierTests.vector("firebase/valid")
        let verifier = try IDTokenVerifier(profile: v.profile, keys: v.keys)
        let accepted = try #require(verifier.evaluate(v.token, keys: v.keys, at: v.at).verifiedToken)
        let jws = try CompactJWS(v.token, limits: v.profile.limits)
        let fromSplit = try verifier.evaluate(jws, keys: v.keys, at: v.at).get()
        let verified = try verifier.verify(v.token, keys: v.keys, now: v.at)
        #expect(accepted.claims.object.rawJSON == verified.claims.object.rawJSON)
        #expect(fromSplit.subject == verified.subject)
    }

    @Test("a nonce given without a mode is compared the profile's way")
    func nonceFollowsTheProfile() async throws {
        // The token carries the SHA-256 hex of the raw nonce; Sign in with Apple profiles say so.
        let hashed = try VerifierTests.vector("apple/nonce-sha256-valid")
        let raw = "c9IlUwoBk2XRoSQZu1kdJsvxZOLmuKT8"
        #expect(hashed.profile.nonceMode == .sha256Hex)
        let apple = try IDTokenVerifier(profile: hashed.profile, keys: hashed.keys)
        #expect(throws: Never.self) { try apple.verify(hashed.token, keys: hashed.keys, now: hashed.at, nonce: Nonce(raw)) }
        _ = try await apple.verify(hashed.token, now: hashed.at, nonce: Nonce(raw))
        #expect(apple.evaluate(hashed.token, keys: hashed.keys, at: hashed.at, nonce: Nonce(raw)).isAccepted)
        // An explicit mode overrides the profile's.
        #expect(apple.evaluate(hashed.token, keys: hashed.keys, at: hashed.at, nonce: .exact(raw)).error?.code == .nonceMismatch)

        // A token that carries the nonce as sent: refused under the hashing profile, accepted once the profile
        // says the provider carries it exactly, or has no mode (exact).
        let plain = try VerifierTests.vector("apple/nonce-exact-valid")
        let plainVerifier = try IDTokenVerifier(profile: plain.profile, keys: plain.keys)
        #expect(plainVerifier.evaluate(plain.token, keys: plain.keys, at: plain.at, nonce: Nonce(raw)).error?.code == .nonceMismatch)
        for mode in [NonceMode.exact, nil] {
            var profile = plain.profile
            profile.nonceMode = mode
            let verifier = try IDTokenVerifier(profile: profile, keys: plain.keys)
            #expect(verifier.evaluate(plain.token, keys: plain.keys, at: plain.at, nonce: Nonce(raw)).isAccepted, "\(String(describing: mode))")
            _ = try await verifier.verify(plain.token, now: plain.at, nonce: Nonce(raw))
            #expect(verifier.evaluate(plain.token, keys: plain.keys, at: plain.at, nonce: .sha256Hex(raw)).error?.code == .nonceMismatch)
        }
    }

    @Test("the verified-token cache compares a nonce without a mode the profile's way too")
    func cachedNonceFollowsTheProfile() throws {
        let hashed = try VerifierTests.vector("apple/nonce-sha256-valid")
        let raw = "c9IlUwoBk2XRoSQZu1kdJsvxZOLmuKT8"
        let cached = try IDTokenVerifier(profile: hashed.profile, keys: hashed.keys, cache: .capacity(16))
        _ = try cached.verify(hashed.token, keys: hashed.keys, now: hashed.at, nonce: Nonce(raw))
        #expect(cached.verifiedTokenCache?.count == 1)
        #expect(cached.evaluate(hashed.token, keys: hashed.keys, at: hashed.at, nonce: Nonce(raw)).isAccepted)
        #expect(cached.evaluate(hashed.token, keys: hashed.keys, at: hashed.at, nonce: Nonce(raw + "x")).error?.code == .nonceMismatch)
    }
}
