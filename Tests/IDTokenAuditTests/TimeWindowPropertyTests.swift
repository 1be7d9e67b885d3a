import Foundation
@testable import IDTokenAudit
@testable import IDTokenKit
import TestSupport
import Testing

/// DESIGN §2's time rules are applied in three places — the verifier's time check, the verified-token cache's
/// re-check of a token it holds, and the audit's interval over which one verdict holds — and all three ask one
/// ``TimeWindow``. These tests draw random claims and times around each threshold and check that the three
/// agree with a fresh verification.
@Suite("One time window: verifier, verified-token cache and audit agree")
struct TimeWindowPropertyTests {
    static let signer = TestSigner(.es256, kid: "window")
    static let issuer = "https://issuer.example"
    static let audience = "client"

    /// A profile with no required `iat`/`auth_time`, so that every combination of the four claims is legal.
    static func profile(leeway: Int) -> Profile {
        var profile = Profile.oidc(issuers: [issuer], audiences: [audience], algorithms: [.es256])
        profile.leeway = Leeway(seconds: leeway)
        return profile
    }

    /// One drawn token: its claims as JSON members and the leeway it is judged with.
    struct Drawn {
        var members: [String]
        var leeway: Int
        /// Whether some time claim is not a NumericDate: the verifier then refuses with `invalid_claim` at times
        /// when the earlier checks pass, which the window (made of valid dates only) does not say.
        var hasInvalidTime: Bool
    }

    static func draw(_ random: inout SplitMix64) -> Drawn {
        let base = 1_767_268_800 + random.below(20_000) - 10_000
        var invalid = false
        func time(_ offset: Int) -> String {
            // Integers mostly, some fractions (their bounds then fall between whole seconds), rarely not a date.
            switch random.below(20) {
            case 0:
                invalid = true
                return random.pick(["\"\(base + offset)\"", "null", "-5", "true"])
            case 1...5: return String(Double(base + offset) + random.pick([0.25, 0.5, 0.1, 0.999]))
            default: return String(base + offset)
            }
        }
        var members = ["\"iss\":\"\(issuer)\"", "\"aud\":\"\(audience)\"", "\"sub\":\"user\""]
        members.append("\"exp\":\(time(random.below(4000) - 500))")
        if random.chance(1, in: 2) { members.append("\"nbf\":\(time(random.below(400) - 200))") }
        if random.chance(1, in: 2) { members.append("\"iat\":\(time(random.below(400) - 200))") }
        if random.chance(1, in: 2) { members.append("\"auth_time\":\(time(random.below(800) - 600))") }
        members.shuffle(using: &random)
        let leeway = random.pick([0, 1, 60, 300, random.below(301)])
        return Drawn(members: members, leeway: leeway, hasInvalidTime: invalid)
    }

    /// Times around each threshold (on it, one ulp either side, a second either side) and a few anywhere.
    static func instants(_ window: TimeWindow, _ random: inout SplitMix64) -> [Double] {
        var out: [Double] = []
        for t in window.thresholds {
            out += [t, t.nextDown, t.nextUp, t - 1, t + 1, t - 0.5]
        }
        let centre = window.thresholds.first ?? 1_767_268_800
        for _ in 0..<4 { out.append(centre + Double(random.below(10_000) - 5_000)) }
        return out
    }

    static func code(_ bound: TimeWindow.Bound?) -> TokenError.Code? {
        switch bound {
        case nil: return nil
        case .exp?: return .expired
        case .nbf?: return .notYetValid
        case .iat?, .authTime?: return .issuedInFuture
        }
    }

    @Test("random claims, times around every threshold")
    func threeAgree() throws {
        var random = SplitMix64(seed: 0x71E_3E57)
        let keys = Self.signer.keySet
        for round in 0..<160 {
            let drawn = Self.draw(&random)
            let token = Self.signer.token(payload: "{" + drawn.members.joined(separator: ",") + "}")
            let profile = Self.profile(leeway: drawn.leeway)
            let verifier = try IDTokenVerifier(profile: profile, keys: keys)
            let cached = try IDTokenVerifier(profile: profile, keys: keys, cache: .capacity(8))
            let multi = try MultiProfileVerifier([.init(verifier: try IDTokenVerifier(profile: profile, keys: keys))])
            let claims = try CompactJWS(token).claims()
            let window = TimeWindow(claims: claims, leeway: Double(drawn.leeway))
            let context = "round \(round): {\(drawn.members.joined(separator: ","))} leeway \(drawn.leeway)"

            func fresh(_ t: Double) -> TokenError.Code? {
                verifier.evaluate(token, keys: keys, at: Date(timeIntervalSince1970: t)).error?.code
            }
            // A time at which the token is valid, if there is one, to put it in the verified-token cache.
            let valid = Self.instants(window, &random).first { fresh($0) == nil }

            for t in Self.instants(window, &random) {
                let verdict = fresh(t)
                // 1. The verifier's time check is the window's.
                if !drawn.hasInvalidTime {
                    #expect(verdict == Self.code(window.refusal(at: t)), "\(context) at \(t)")
                }
                // 2. The verified-token cache answers exactly when a fresh verification accepts.
                if let valid {
                    _ = try cached.verify(token, keys: keys, now: Date(timeIntervalSince1970: valid))
                    let hit = cached.verifiedTokenCache!.verifiedToken(token, keys: keys, now: t, nonce: nil)
                    #expect((hit != nil) == (verdict == nil), "\(context): cache at \(t), fresh \(String(describing: verdict))")
                }
                // 3. The audit's judgement agrees, and holds over its whole interval.
                let judgement = multi.evaluate(token, at: t, nonce: nil)
                #expect(judgement.error?.code == verdict, "\(context): audit at \(t)")
                #expect(judgement.timeThresholds == window.thresholds, "\(context)")
                let (from, until) = judgement.interval(around: t)
                #expect(from <= t && t < until, "\(context): \(t) outside [\(from), \(until))")
                if from.isFinite { #expect(fresh(from) == verdict, "\(context): at \(from), start of the interval around \(t)") }
                if until.isFinite { #expect(fresh(until.nextDown) == verdict, "\(context): just before \(until), the end of the interval around \(t)") }
            }
        }
    }

    @Test("an audit with its verdict cache gives each record the verdict of a fresh verification")
    func auditWithCacheAgrees() throws {
        var random = SplitMix64(seed: 0xA0D1_7)
        let keys = Self.signer.keySet
        for _ in 0..<12 {
            var drawn = Self.draw(&random)
            while drawn.hasInvalidTime { drawn = Self.draw(&random) }
            let token = Self.signer.token(payload: "{" + drawn.members.joined(separator: ",") + "}")
            let profile = Self.profile(leeway: drawn.leeway)
            let verifier = try IDTokenVerifier(profile: profile, keys: keys)
            let window = TimeWindow(claims: try CompactJWS(token).claims(), leeway: Double(drawn.leeway))
            // Times a whole or half second from each threshold (exact in the log's decimal text), shuffled, so
            // that the cache is asked for one token at times on both sides of every threshold.
            var times: [Double] = []
            for t in window.thresholds { times += [t.rounded(.down), t.rounded(.down) - 1, t.rounded(.up), t.rounded(.up) + 0.5] }
            times.shuffle(using: &random)
            let log = times.map { "{\"token\":\"\(token)\",\"at\":\($0)}" }.joined(separator: "\n")
            let multi = try MultiProfileVerifier([.init(verifier: try IDTokenVerifier(profile: profile, keys: keys))])
            let run = try AuditRun(Array(log.utf8), verifier: multi, threads: 1, cache: 64)
            let expected = times.map { verifier.evaluate(token, keys: keys, at: Date(timeIntervalSince1970: $0)).error?.code }
            #expect(run.results.map { $0.error?.code } == expected, "{\(drawn.members.joined(separator: ","))} leeway \(drawn.leeway) at \(times)")
            #expect(run.summary.cacheHits > 0 || times.count < 2)
        }
    }
}
