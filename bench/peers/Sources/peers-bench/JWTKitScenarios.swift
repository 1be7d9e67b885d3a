import Foundation
import PeerBenchHarness
import JWTKit

/// vapor/jwt-kit 5.8 verifying the same tokens with the same keys, through its documented API: a
/// `JWTKeyCollection` (an actor) loaded from the JWKS, and the vendor identity-token types with the expected
/// audience. Facebook Limited Login and the generic OIDC token have no vendor type in jwt-kit, so they use a
/// payload type with the same checks (issuer, audience, expiry).
func jwtKitScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    // One key collection shared by every task, as a server builds it once at start-up.
    let keys = try loadKeyCollection(fixtures.jwksJSON)

    func scenario<Payload: JWTPayload>(_ name: String, _ tokenName: String, baseline: String,
                                       verify: @escaping @Sendable (JWTKeyCollection, String) async throws -> Payload) throws -> Scenario {
        let token = try fixtures.token(tokenName)
        return Scenario(name: name, summary: "vapor/jwt-kit 5.8, \(tokenName), end to end", baseline: baseline) {
            return {
                do {
                    _ = try await verify(keys, token)
                    return true
                } catch {
                    return false
                }
            }
        }
    }

    let firebaseAudience = fixtures.audiences["firebase"] ?? ""
    let appleAudience = fixtures.audiences["apple"] ?? ""
    let facebookAudience = fixtures.audiences["facebook"] ?? ""
    let oidcAudience = fixtures.audiences["oidc-es256"] ?? ""
    return [
        try scenario("jwtkit-firebase", "firebase", baseline: "raw-rsa2048") { keys, token in
            try await keys.verify(token, as: FirebaseAuthIdentityToken.self, expectedAudience: firebaseAudience)
        },
        try scenario("jwtkit-apple", "apple", baseline: "raw-rsa2048") { keys, token in
            try await keys.verify(token, as: AppleIdentityToken.self, expectedAudience: appleAudience)
        },
        try scenario("jwtkit-facebook", "facebook", baseline: "raw-rsa2048") { keys, token in
            let payload = try await keys.verify(token, as: LimitedLoginPayload.self)
            try payload.audience.verifyIntendedAudience(includes: facebookAudience)
            return payload
        },
        try scenario("jwtkit-es256", "oidc-es256", baseline: "raw-p256") { keys, token in
            let payload = try await keys.verify(token, as: OIDCPayload.self)
            try payload.audience.verifyIntendedAudience(includes: oidcAudience)
            return payload
        },
    ]
}

/// Loads the JWKS into a key collection (an actor, so loading is `async`) before any measurement starts.
func loadKeyCollection(_ jwks: String) throws -> JWTKeyCollection {
    final class Box: @unchecked Sendable { var result: Result<JWTKeyCollection, any Error>? }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.result = .success(try await JWTKeyCollection().add(jwksJSON: jwks)) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

struct LimitedLoginPayload: JWTPayload {
    let iss: IssuerClaim
    let aud: AudienceClaim
    let sub: SubjectClaim
    let exp: ExpirationClaim
    let iat: IssuedAtClaim
    let jti: IDClaim
    let nonce: String?
    let name: String?
    let given_name: String?
    let family_name: String?
    let email: String?
    let picture: String?

    var audience: AudienceClaim { aud }

    func verify(using _: some JWTAlgorithm) throws {
        guard iss.value == "https://www.facebook.com" else {
            throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "not Facebook")
        }
        try exp.verifyNotExpired()
    }
}

struct OIDCPayload: JWTPayload {
    let iss: IssuerClaim
    let aud: AudienceClaim
    let sub: SubjectClaim
    let exp: ExpirationClaim
    let iat: IssuedAtClaim
    let email: String?
    let email_verified: BoolClaim?
    let name: String?

    var audience: AudienceClaim { aud }

    func verify(using _: some JWTAlgorithm) throws {
        guard iss.value == "https://issuer.example.com" else {
            throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "wrong issuer")
        }
        try exp.verifyNotExpired()
    }
}
