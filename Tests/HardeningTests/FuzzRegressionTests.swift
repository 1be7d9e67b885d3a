import Foundation
import IDTokenKit
import TestSupport
import Testing

/// Inputs the fuzz targets (Tests/Fuzz) found, kept as tests after their fix, with what was wrong.
@Suite struct FuzzRegressionTests {
    /// FuzzJWKS: the RFC 7517 example EC key, which has no kid, merged with itself gave a set that held it twice.
    /// A token without a kid may use a set's only key, so the doubled set refused tokens the single one accepted.
    /// Fix: JWKSet keeps one copy of a kid-less key listed more than once (which `merging` goes through).
    static let kidlessJWK = #"{"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#

    @Test func aKidlessKeyMergedWithItselfIsKeptOnce() throws {
        let set = try JWKSet.parse(Self.kidlessJWK)
        #expect(set.keys.count == 1)
        #expect(set.merging(set).keys.count == 1)
        #expect(try JWKSet.parse("{\"keys\":[\(Self.kidlessJWK),\(Self.kidlessJWK)]}").keys.count == 1)
    }

    @Test func aTokenWithoutKidStillFindsTheOnlyKeyOfAMergedSet() throws {
        let jwk = Fixtures.ec.jwk(kid: "x").replacingOccurrences(of: "\"kid\":\"x\",", with: "")
        let set = try JWKSet.parse("{\"keys\":[\(jwk)]}")
        let merged = set.merging(try JWKSet.parse("{\"keys\":[\(jwk),\(jwk)]}"))
        #expect(merged.keys.count == 1)
        let token = Fixtures.token(.oidc, header: Fixtures.header(alg: "ES256", kid: nil), signer: Fixtures.ec)
        #expect(Outcome.of(Fixtures.verifier(.oidc), token, keys: merged) == .accepted)
        // Two different kid-less keys stay two, and then a token without a kid has no key to choose.
        let two = merged.merging(try JWKSet.parse(Fixtures.attackerEC.jwk(kid: "x").replacingOccurrences(of: "\"kid\":\"x\",", with: "")))
        #expect(two.keys.count == 2)
        #expect(Outcome.of(Fixtures.verifier(.oidc), token, keys: two) == .rejected(.unknownKey))
    }
}
