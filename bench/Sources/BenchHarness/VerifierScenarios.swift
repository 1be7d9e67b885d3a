import Foundation
import IDTokenKit

/// End-to-end scenarios through IDTokenKit's verifier: the whole pipeline of DESIGN §2 (shape, header, key,
/// signature, claims, profile rules, nonce) against a key-set snapshot, as a backend or an audit runs it.
func verifierScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    let now = Date(timeIntervalSince1970: Double(fixtures.now))
    func audience(_ name: String) throws -> String {
        guard let audience = fixtures.audiences[name] else { throw BenchError("no audience for \(name)") }
        return audience
    }
    let cases: [(name: String, token: String, profile: Profile, nonce: Nonce?, baseline: String)] = [
        ("verify-firebase", try fixtures.token("firebase"), .firebase(projectID: try audience("firebase")), nil, "raw-rsa2048"),
        ("verify-apple", try fixtures.token("apple"), .apple(clientID: try audience("apple")), .sha256Hex(fixtures.rawNonce), "raw-rsa2048"),
        ("verify-facebook", try fixtures.token("facebook"), .facebook(appID: try audience("facebook")), .sha256Hex(fixtures.rawNonce), "raw-rsa2048"),
        ("verify-oidc-es256", try fixtures.token("oidc-es256"),
         .oidc(issuers: ["https://issuer.example.com"], audiences: [try audience("oidc-es256")]), nil, "raw-p256"),
    ]
    var scenarios = try cases.map { c in
        let verifier = try IDTokenVerifier(profile: c.profile, keys: fixtures.jwks)
        let keys = fixtures.jwks
        do { _ = try verifier.verify(c.token, keys: keys, now: now, nonce: c.nonce) } catch {
            throw BenchError("the \(c.name) fixture does not verify: \(error)")
        }
        let (token, nonce) = (c.token, c.nonce)
        return Scenario(name: c.name, summary: "IDTokenVerifier.verify(_:keys:now:nonce:), \(c.profile.provider.tokenName)",
                        baseline: c.baseline) {
            return { (try? verifier.verify(token, keys: keys, now: now, nonce: nonce)) != nil }
        }
    }
    // The backend path: the asynchronous verify reading the key source's snapshot (no suspension when the key
    // is there).
    let firebase = try fixtures.token("firebase")
    let asyncVerifier = try IDTokenVerifier(profile: .firebase(projectID: try audience("firebase")),
                                            keys: StaticKeySource(fixtures.jwks))
    scenarios.append(Scenario(name: "verify-firebase-async", summary: "IDTokenVerifier.verify(_:now:nonce:) async, Firebase ID token",
                              baseline: "raw-rsa2048") {
        return { (try? await asyncVerifier.verify(firebase, now: now)) != nil }
    })
    return scenarios
}

/// Tokens seen before: the verifier's ``VerifiedTokenCache`` answers them (the time claims, the key and the
/// profile's state-dependent rules checked again at `now`), as a backend answers a session's later requests.
/// The baseline is still the raw RSA or P-256 operation, so the ratio says how many fresh verifications one hit
/// is worth.
func cachedVerifierScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    let now = Date(timeIntervalSince1970: Double(fixtures.now))
    func audience(_ name: String) throws -> String {
        guard let audience = fixtures.audiences[name] else { throw BenchError("no audience for \(name)") }
        return audience
    }
    let cases: [(name: String, token: String, profile: Profile, baseline: String)] = [
        ("cached-firebase", try fixtures.token("firebase"), .firebase(projectID: try audience("firebase")), "raw-rsa2048"),
        ("cached-oidc-es256", try fixtures.token("oidc-es256"),
         .oidc(issuers: ["https://issuer.example.com"], audiences: [try audience("oidc-es256")]), "raw-p256"),
    ]
    var scenarios = try cases.map { c in
        let verifier = try IDTokenVerifier(profile: c.profile, keys: fixtures.jwks, cache: .capacity(100_000))
        let (token, keys) = (c.token, fixtures.jwks)
        do { _ = try verifier.verify(token, keys: keys, now: now) } catch {
            throw BenchError("the \(c.name) fixture does not verify: \(error)")
        }
        return Scenario(name: c.name, summary: "IDTokenVerifier.verify(_:keys:now:nonce:) answered by its verified-token cache",
                        baseline: c.baseline) {
            return { (try? verifier.verify(token, keys: keys, now: now)) != nil }
        }
    }
    let firebase = try fixtures.token("firebase")
    let asyncVerifier = try IDTokenVerifier(profile: .firebase(projectID: try audience("firebase")),
                                            keys: StaticKeySource(fixtures.jwks), cache: .capacity(100_000))
    scenarios.append(Scenario(name: "cached-firebase-async",
                              summary: "IDTokenVerifier.verify(_:now:nonce:) async answered by its verified-token cache",
                              baseline: "raw-rsa2048") {
        return { (try? await asyncVerifier.verify(firebase, now: now)) != nil }
    })
    return scenarios
}
