@_spi(Benchmarks) import JOSE

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
        try rawBaseline(name: "raw-p256", summary: "EVP_PKEY_verify, ECDSA P-256, precomputed SHA-256",
                        token: es256, keys: fixtures.jwks),
        joseScenario(name: "jose-rs256", token: firebase, keys: fixtures.jwks, baseline: "raw-rsa2048"),
        joseScenario(name: "jose-es256", token: es256, keys: fixtures.jwks, baseline: "raw-p256"),
    ]
    scenarios += try verifierScenarios(fixtures)
    scenarios += try replayScenarios(fixtures)
    scenarios += try cachedVerifierScenarios(fixtures)
    return scenarios
}
