import Foundation
import Synchronization
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
    scenarios.append(try batchScenario(fixtures, audience: try audience("firebase")))
    scenarios.append(try batchScenario(fixtures, audience: try audience("firebase"), replicated: true))
    scenarios.append(try singleEightScenario(fixtures, audience: try audience("firebase")))
    return scenarios
}

/// Eight distinct Firebase ID tokens per call through ``MultiProfileVerifier/evaluate(batch:)``, each thread with a
/// ``SignatureBatch`` of its own (as each audit worker keeps one), counted as eight verifications: their RS256
/// signatures go through the IFMA kernel eight at a time where the CPU has it (or `IDTK_RSA_BATCH` names another
/// implementation), one libcrypto call each otherwise.
///
/// `replicated` (`verify-firebase-replica8`): each thread with its own replica of the verifier
/// (`MultiProfileVerifier.replica()`, as each audit worker keeps one) and its own token strings, so that no reference
/// count a thread changes on every token is another core's. Beside `verify-firebase-batch8` at many threads it
/// measures what sharing those objects costs: each retain or release of an object another core holds moves the
/// object's cache line between cores.
func batchScenario(_ fixtures: Fixtures, audience: String, replicated: Bool = false) throws -> Scenario {
    let at = Double(fixtures.now)
    let verifier = MultiProfileVerifier(try IDTokenVerifier(profile: .firebase(projectID: audience), keys: fixtures.jwks))
    let tokens = try (1...8).map { try fixtures.token("firebase-user-\($0)") }
    @Sendable func entries() -> [MultiProfileVerifier.BatchEntry] {
        tokens.map { MultiProfileVerifier.BatchEntry(token: replicated ? $0.inStorageOfItsOwn : $0, at: at) }
    }
    @Sendable func threadVerifier() -> MultiProfileVerifier { replicated ? verifier.replica() : verifier }
    let check = SignatureBatch()
    let outcomes = threadVerifier().evaluate(batch: entries(), signatures: check)
    guard outcomes.allSatisfy({ $0.error == nil }) else {
        throw BenchError("a firebase-user fixture does not verify through the batch: \(outcomes.compactMap(\.error))")
    }
    let shared = entries()
    var scenario = Scenario(name: replicated ? "verify-firebase-replica8" : "verify-firebase-batch8",
                            summary: "MultiProfileVerifier.evaluate(batch:), 8 distinct Firebase ID tokens, signatures by \(check.implementation.rawValue)"
                                + (replicated ? ", a replica of the verifier and tokens of its own a thread" : ""),
                            baseline: "raw-rsa2048") {
        let (verifier, entries) = (threadVerifier(), replicated ? entries() : shared)
        let signatures = SignatureBatch()
        return { verifier.evaluate(batch: entries, signatures: signatures).allSatisfy { $0.error == nil } }
    }
    scenario.operationsPerCall = 8
    return scenario
}

/// The same eight tokens as `verify-firebase-batch8`, through ``MultiProfileVerifier/evaluate(_:at:nonce:profile:)``
/// one at a time: the single path the batch replaces (the audit's, before it verified in batches).
func singleEightScenario(_ fixtures: Fixtures, audience: String) throws -> Scenario {
    let at = Double(fixtures.now)
    let verifier = MultiProfileVerifier(try IDTokenVerifier(profile: .firebase(projectID: audience), keys: fixtures.jwks))
    let tokens = try (1...8).map { try fixtures.token("firebase-user-\($0)") }
    var scenario = Scenario(name: "verify-firebase-single8",
                            summary: "MultiProfileVerifier.evaluate(_:at:), the 8 tokens of verify-firebase-batch8 one at a time",
                            baseline: "raw-rsa2048") {
        return { tokens.allSatisfy { verifier.evaluate($0, at: at).error == nil } }
    }
    scenario.operationsPerCall = 8
    return scenario
}

/// Tokens seen before: the verifier's ``VerifiedTokenCache`` answers them (the time claims, the key and the
/// profile's state-dependent rules checked again at `now`), as a backend answers a session's later requests.
/// The baseline is still the raw RSA operation, so the ratio says how many fresh verifications one hit is worth.
///
/// In `cached-firebase` and `cached-firebase-async` each thread (or task) cycles over four users' tokens of its
/// own, as threads serving different sessions do (with more than two threads, groups repeat).
/// `cached-firebase-shared` has every thread present the same token: the worst case, where the threads share
/// the token's shard lock and the reference counts of the result they are handed.
func cachedVerifierScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    let now = Date(timeIntervalSince1970: Double(fixtures.now))
    guard let projectID = fixtures.audiences["firebase"] else { throw BenchError("no audience for firebase") }
    let keys = fixtures.jwks
    let verifier = try IDTokenVerifier(profile: .firebase(projectID: projectID), keys: keys, cache: .capacity(100_000))
    let asyncVerifier = try IDTokenVerifier(profile: .firebase(projectID: projectID), keys: StaticKeySource(keys),
                                            cache: .capacity(100_000))
    let users = try (1...8).map { try fixtures.token("firebase-user-\($0)") }
    let shared = try fixtures.token("firebase")
    for token in users + [shared] {
        do {
            _ = try verifier.verify(token, keys: keys, now: now)
            _ = try asyncVerifier.verify(token, keys: keys, now: now)
        } catch {
            throw BenchError("a cached-firebase fixture does not verify: \(error)")
        }
    }
    let groups = ThreadGroups(users, groupSize: 4)
    return [
        Scenario(name: "cached-firebase", summary: "IDTokenVerifier.verify(_:keys:now:nonce:) answered by its verified-token cache",
                 baseline: "raw-rsa2048") {
            let tokens = groups.next()
            var index = 0
            return {
                index = (index + 1) & 3
                return (try? verifier.verify(tokens[index], keys: keys, now: now)) != nil
            }
        },
        Scenario(name: "cached-firebase-shared", summary: "the same, every thread presenting the same token",
                 baseline: "raw-rsa2048") {
            return { (try? verifier.verify(shared, keys: keys, now: now)) != nil }
        },
        Scenario(name: "cached-firebase-async", summary: "IDTokenVerifier.verify(_:now:nonce:) async answered by its verified-token cache",
                 baseline: "raw-rsa2048") {
            let tokens = groups.next()
            let counter = Counter()
            return { (try? await asyncVerifier.verify(tokens[counter.next() & 3], now: now)) != nil }
        },
    ]
}

/// Hands each new thread the next group of tokens, round robin.
final class ThreadGroups: Sendable {
    private let groups: [[String]]
    private let handed = Atomic<Int>(0)

    init(_ tokens: [String], groupSize: Int) {
        groups = stride(from: 0, to: tokens.count, by: groupSize).map { Array(tokens[$0..<min($0 + groupSize, tokens.count)]) }
    }

    func next() -> [String] { groups[handed.add(1, ordering: .relaxed).oldValue % groups.count] }
}

/// A per-task counter (each task owns one; the atomic only satisfies `Sendable`).
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).oldValue }
}
