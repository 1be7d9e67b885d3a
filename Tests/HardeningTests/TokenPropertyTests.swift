import Foundation
import IDTokenKit
import TestSupport
import Testing

/// Properties of the verifier over generated inputs (fixed seeds: every run draws the same cases; a failure
/// names the seed and case, and replays).
///
/// The base64url round trip and the refusal of non-canonical base64url are in JOSETests (Base64URLTests).
@Suite struct TokenPropertyTests {
    typealias P = Fixtures.Provider

    /// One valid token per provider (RS256), and an ES256 one for OIDC.
    static let validTokens: [(P, String)] = P.allCases.map { ($0, Fixtures.token($0)) }
        + [(.oidc, Fixtures.token(.oidc, header: Fixtures.header(alg: "ES256", kid: "ec-1"), signer: Fixtures.ec))]

    // MARK: Any single-byte change is rejected

    /// Replaces every byte of each valid token in turn with sampled values (base64url characters, the dot,
    /// whitespace, control and non-ASCII bytes), and deletes it; not one of these tokens is accepted.
    @Test(arguments: 0..<5)
    func everySingleByteChangeIsRejected(tokenIndex: Int) {
        let (provider, token) = Self.validTokens[tokenIndex]
        let verifier = Fixtures.verifier(provider)
        #expect(Outcome.of(verifier, token, keys: Fixtures.keys) == .accepted, "the unmodified token must verify")
        let bytes = Array(token.utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var rng = SplitMix64(seed: 0x6F6E_6562_7974_6500 &+ UInt64(tokenIndex))
        var tried = 0
        var codes: [TokenError.Code: Int] = [:]
        for position in bytes.indices {
            var replacements: Set<UInt8> = [rng.pick(alphabet), rng.pick(alphabet), UInt8(ascii: "."),
                                            rng.pick([0x00, 0x09, 0x20, 0x3D, 0x2B, 0x2F]), UInt8(truncatingIfNeeded: rng.next() | 0x80)]
            // The neighbouring characters of the alphabet flip the lowest bits, the ones a lax decoder ignores.
            if let k = alphabet.firstIndex(of: bytes[position]) {
                replacements.insert(alphabet[k ^ 1])
                replacements.insert(alphabet[k ^ 2])
            }
            replacements.remove(bytes[position])
            var variants = replacements.map { value -> [UInt8] in
                var changed = bytes
                changed[position] = value
                return changed
            }
            var deleted = bytes
            deleted.remove(at: position)
            variants.append(deleted)
            for variant in variants {
                tried += 1
                let changed = String(decoding: variant, as: UTF8.self)
                switch Outcome.of(verifier, changed, keys: Fixtures.keys) {
                case .accepted:
                    Issue.record("\(provider) accepted a token changed at byte \(position): \(changed)")
                case .rejected(let code):
                    codes[code, default: 0] += 1
                }
            }
        }
        #expect(tried > bytes.count * 5)
        // The changes reach every stage: shape, header, signature.
        #expect(codes[.malformed, default: 0] > 0 && codes[.badSignature, default: 0] > 0, "\(codes)")
    }

    // MARK: Time only moves a token towards expiry

    /// Tokens with random times (integral and fractional `exp`, `iat`, `nbf`, `auth_time`) for every provider
    /// and leeway, judged at an increasing sequence of times: once a token is `expired`, it stays `expired` at
    /// every later time, and a token is never accepted after a time at which it was expired.
    @Test(arguments: [UInt64(0x6578_7031), 0x6578_7032, 0x6578_7033])
    func movingNowForwardNeverRevivesAnExpiredToken(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var expiredSeen = 0, acceptedSeen = 0
        for n in 0..<60 {
            let provider = rng.pick(P.allCases)
            let leeway = rng.pick([0, 60, 300])
            let profile = Fixtures.profile(provider).withLeeway(Leeway(seconds: leeway))
            let verifier = try! IDTokenVerifier(profile: profile, keys: Fixtures.keys)
            let base = Fixtures.now
            func time(_ spread: Int) -> String {
                let seconds = base + Int64(rng.below(2 * spread)) - Int64(spread)
                return rng.chance(1, in: 3) ? "\(seconds).\(rng.below(1000))" : "\(seconds)"
            }
            var claims = Fixtures.claims(provider)
            claims["exp"] = time(4000)
            claims["iat"] = time(4000)
            if provider == .firebase { claims["auth_time"] = time(4000) }
            if rng.chance(1, in: 2) { claims["nbf"] = time(4000) }
            let token = Fixtures.token(provider, claims: claims, signer: provider == .oidc && rng.chance(1, in: 2) ? Fixtures.ec : Fixtures.rsa)

            var now = Double(base - 6000)
            var expiredAt: Double?
            while now < Double(base + 6000) {
                let outcome = Outcome.of(verifier, token, keys: Fixtures.keys, now: Date(timeIntervalSince1970: now))
                if let expiredAt {
                    #expect(outcome == .rejected(.expired),
                            "seed \(seed) case \(n): expired at \(expiredAt), then \(outcome) at \(now); leeway \(leeway); \(claims.json)")
                } else if outcome == .rejected(.expired) {
                    expiredAt = now
                    expiredSeen += 1
                }
                if outcome == .accepted { acceptedSeen += 1 }
                now += Double(rng.below(400)) + Double(rng.below(1000)) / 1000
            }
        }
        // Both verdicts occur often, or the property proves little.
        #expect(expiredSeen > 30 && acceptedSeen > 100, "expired \(expiredSeen), accepted \(acceptedSeen)")
    }

    /// The boundary itself, to the leeway and to fractions of a second: accepted before `exp + leeway`,
    /// `expired` from it on.
    @Test(arguments: [0, 60, 300])
    func expiryBoundary(leeway: Int) {
        let profile = Fixtures.profile(.oidc).withLeeway(Leeway(seconds: leeway))
        let verifier = try! IDTokenVerifier(profile: profile, keys: Fixtures.keys)
        for exp in ["\(Fixtures.now)", "\(Fixtures.now).5"] {
            let token = Fixtures.token(.oidc, claims: Fixtures.claims(.oidc).with("exp", exp).with("iat", "\(Fixtures.now - 7200)"))
            let boundary = Double(exp)! + Double(leeway)
            for (delta, expected) in [(-1.0, Outcome.accepted), (-0.001, .accepted), (0, .rejected(.expired)), (0.001, .rejected(.expired)), (1, .rejected(.expired))] {
                let at = Date(timeIntervalSince1970: boundary + delta)
                #expect(Outcome.of(verifier, token, keys: Fixtures.keys, now: at) == expected, "exp \(exp), leeway \(leeway), now = boundary \(delta)")
            }
        }
    }

    // MARK: Threads do not change verdicts

    /// A mixed set — the whole attack catalogue, valid tokens, and random single-byte changes of them — gets
    /// the same verdicts on one thread as on eight threads sharing the same verifiers and key sets, and the same
    /// through the asynchronous path with a thousand concurrent tasks.
    @Test func verdictsDoNotDependOnThreadCount() async {
        struct Job: Sendable { let verifier: IDTokenVerifier; let token: String; let keys: JWKSet }
        let verifiers = Dictionary(uniqueKeysWithValues: P.allCases.map { ($0, Fixtures.verifier($0)) })
        var jobs = AttackCatalogueTests.cases.map { Job(verifier: verifiers[$0.provider]!, token: $0.token, keys: $0.keys) }
        var rng = SplitMix64(seed: 0x7468_7265_6164_73)
        for (provider, token) in Self.validTokens {
            jobs.append(Job(verifier: verifiers[provider]!, token: token, keys: Fixtures.keys))
            for _ in 0..<40 {
                var bytes = Array(token.utf8)
                bytes[rng.below(bytes.count)] = UInt8(truncatingIfNeeded: rng.next())
                jobs.append(Job(verifier: verifiers[provider]!, token: String(decoding: bytes, as: UTF8.self), keys: Fixtures.keys))
            }
        }
        let sequential = jobs.map { Outcome.of($0.verifier, $0.token, keys: $0.keys) }
        #expect(Set(sequential).count > 5)

        // Eight threads, each verifying every job, in a different order.
        let threads = 8
        let results = UnsafeMutableBufferPointer<Outcome?>.allocate(capacity: threads * jobs.count)
        results.initialize(repeating: nil)
        defer { results.deallocate() }
        let shared = jobs
        nonisolated(unsafe) let sink = results
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var order = Array(shared.indices)
            var rng = SplitMix64(seed: UInt64(thread))
            order.shuffle(using: &rng)
            for k in order {
                sink[thread * shared.count + k] = Outcome.of(shared[k].verifier, shared[k].token, keys: shared[k].keys)
            }
        }
        for thread in 0..<threads {
            let verdicts = (0..<jobs.count).map { results[thread * jobs.count + $0] }
            let differing = zip(verdicts, sequential).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            #expect(differing.isEmpty, "thread \(thread) differs on \(differing.count) tokens, first \(differing.first.map { jobs[$0].token } ?? "")")
        }

        // The asynchronous path: every job as its own task, all at once.
        let concurrent = await withTaskGroup(of: (Int, Outcome).self) { group in
            for (k, job) in shared.enumerated() {
                group.addTask {
                    do throws(TokenError) {
                        _ = try await job.verifier.verify(job.token, now: Fixtures.nowDate)
                        return (k, .accepted)
                    } catch {
                        return (k, .rejected(error.code))
                    }
                }
            }
            var out = [Outcome?](repeating: nil, count: shared.count)
            for await (k, outcome) in group { out[k] = outcome }
            return out
        }
        // The asynchronous verifier uses its own key source (the fixtures' standard set), so compare the jobs
        // that use that set.
        for (k, job) in jobs.enumerated() where job.keys.keys.map(\.thumbprint) == Fixtures.keys.keys.map(\.thumbprint) {
            #expect(concurrent[k] == sequential[k], "async verdict differs for \(job.token)")
        }
    }
}
