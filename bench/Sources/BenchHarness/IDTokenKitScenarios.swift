import Foundation
import JOSE

/// The raw libcrypto verification of `token`'s signature with `key`, over a precomputed digest.
public func rawBaseline(name: String, summary: String, token: String, keys: JWKSet) throws -> Scenario {
    let jws = try CompactJWS(token)
    let key = try jws.selectKey(from: keys, allowed: Set(JWSAlgorithm.allCases))
    let signature = Base64URL.decode(jws.signatureSegment)!
    let message = Array(jws.signingInput.utf8)
    guard RawVerifyBaseline(key: key, signature: signature, message: message) != nil else {
        throw BenchError("the baseline signature for \(name) does not verify")
    }
    return Scenario(name: name, summary: summary, baseline: nil) {
        let baseline = RawVerifyBaseline(key: key, signature: signature, message: message)!
        return { baseline.run() }
    }
}

/// Eight RSA-2048 public operations per call through ``RSABatchPower`` (the implementation `IDTK_RSA_BATCH`
/// chooses, else IFMA when the CPU has it, else libcrypto), counted as eight operations: the signatures copied
/// into the lanes, `s^e mod n` for each, and each lane's result compared in full with the PKCS#1 v1.5 encoding of
/// the digest, as `raw-rsa2048`'s `EVP_PKEY_verify` compares it.
public func rawBatchBaseline(name: String, token: String, keys: JWKSet, baseline: String) throws -> Scenario {
    let jws = try CompactJWS(token)
    let key = try jws.selectKey(from: keys, allowed: [.rs256])
    let signature = Base64URL.decode(jws.signatureSegment)!
    let digest = SHA256.hash(Array(jws.signingInput.utf8))
    let encoded = SignatureBatch.encodingPrefix + digest
    guard let check = RSABatchPower(), check.set(lane: 0, signature: signature, key: key), check.run(lanes: 1),
          check.result(lane: 0) == encoded else {
        throw BenchError("the signature for \(name) does not verify through RSABatchPower")
    }
    var scenario = Scenario(name: name, summary: "RSABatchPower (\(check.implementation.rawValue)): 8 x RSA-2048 s^e mod n, encoding compared",
                            baseline: baseline) {
        let batch = RSABatchPower()!
        return {
            signature.withUnsafeBytes { s in
                for lane in 0..<RSABatchPower.lanes { _ = batch.set(lane: lane, signature: s, key: key) }
            }
            guard batch.run() else { return false }
            var ok = true
            encoded.withUnsafeBytes { e in
                for lane in 0..<RSABatchPower.lanes {
                    ok = batch.withResult(lane: lane) { memcmp($0.baseAddress!, e.baseAddress!, e.count) == 0 } && ok
                }
            }
            return ok
        }
    }
    scenario.operationsPerCall = RSABatchPower.lanes
    return scenario
}

/// The JOSE layer alone: shape, header, key lookup, signature over the received bytes, claims parsed.
public func joseScenario(name: String, token: String, keys: JWKSet, baseline: String) -> Scenario {
    Scenario(name: name, summary: "JOSE: parse, select key, verify signature, parse claims", baseline: baseline) {
        return {
            guard let jws = try? CompactJWS(token),
                  let key = try? jws.selectKey(from: keys, allowed: [.rs256, .es256]),
                  jws.verifySignature(with: key),
                  let claims = try? jws.claims() else { return false }
            return claims.count > 0
        }
    }
}

/// Every IDTokenKit scenario with its baselines.
public func allScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    let firebase = try fixtures.token("firebase")
    let es256 = try fixtures.token("oidc-es256")
    var scenarios = [
        try rawBaseline(name: "raw-rsa2048", summary: "EVP_PKEY_verify, RSA-2048 PKCS#1 v1.5, precomputed SHA-256",
                        token: firebase, keys: fixtures.jwks),
        try rawBatchBaseline(name: "raw-rsa2048-batch8", token: firebase, keys: fixtures.jwks, baseline: "raw-rsa2048"),
        try rawBaseline(name: "raw-p256", summary: "EVP_PKEY_verify, ECDSA P-256, precomputed SHA-256",
                        token: es256, keys: fixtures.jwks),
        joseScenario(name: "jose-rs256", token: firebase, keys: fixtures.jwks, baseline: "raw-rsa2048"),
        joseScenario(name: "jose-es256", token: es256, keys: fixtures.jwks, baseline: "raw-p256"),
    ]
    scenarios += try verifierScenarios(fixtures)
    scenarios += try replayScenarios(fixtures)
    scenarios += try serveScenarios(fixtures)
    scenarios += try cachedVerifierScenarios(fixtures)
    return scenarios
}
