import Foundation
@testable import IDTokenKit
import TestSupport
import Testing

/// The verified-token cache never answers differently from a fresh verification at the same `now`: each test
/// caches a token, changes what a hit must check again (time, key set, nonce, revocation, replay), and compares
/// the cached verifier's verdict with an uncached verifier's.
@Suite struct VerifiedTokenCacheTests {
    static let firebase = Profile.firebase(projectID: Mint.projectID)

    /// A cached and an uncached verifier for `profile`, with a counting rule that only full verifications run.
    static func pair(_ profile: Profile = firebase, keys: JWKSet = Mint.rsa.keySet, capacity: Int = 1000)
        throws -> (cached: IDTokenVerifier, fresh: IDTokenVerifier, fullRuns: CountingRule) {
        let fullRuns = CountingRule(dependsOnlyOnClaims: true)
        let cached = try IDTokenVerifier(profile: profile.adding(fullRuns), keys: keys, cache: .capacity(capacity))
        let fresh = try IDTokenVerifier(profile: profile, keys: keys)
        return (cached, fresh, fullRuns)
    }

    // MARK: Hits

    @Test func aHitReturnsWhatTheFullVerificationReturned() throws {
        let (cached, fresh, fullRuns) = try Self.pair()
        let token = Mint.firebase()
        let keys = Mint.rsa.keySet
        let first = Verdict { () throws(TokenError) in try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 10)) }
        let second = Verdict { () throws(TokenError) in try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 20)) }
        let uncached = Verdict { () throws(TokenError) in try fresh.verify(token, keys: keys, now: Mint.at(Mint.t0 + 20)) }
        guard case .valid = first else { Issue.record("the token should verify: \(first)"); return }
        #expect(second == first)
        #expect(second == uncached)
        #expect(fullRuns.count == 1, "the second verification should be a cache hit")
        #expect(cached.verifiedTokenCache?.count == 1)

        let hit = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 30))
        #expect(hit.subject == "user-0001")
        #expect(hit.kid == "cache-rsa-1")
        #expect(hit.provider == .firebase)
        #expect(hit.firebase.signInProvider == "apple.com")
    }

    /// A service's memo rides on the cached token: every hit carries the same one, the first value kept in it stays,
    /// and a verification that is not cached (the miss itself, a verifier without a cache) carries none.
    @Test func aHitCarriesTheEntrysMemo() throws {
        let (cached, fresh, _) = try Self.pair()
        let token = Mint.firebase(uid: "memo-user")
        let keys = Mint.rsa.keySet
        let miss = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 10))
        #expect(miss.memo == nil)
        #expect(try fresh.verify(token, keys: keys, now: Mint.at(Mint.t0 + 10)).memo == nil)
        let hit = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 20))
        let memo = try #require(hit.memo)
        #expect(memo.value == nil)
        final class Rendering: Sendable { let text: String; init(_ text: String) { self.text = text } }
        memo.keep(Rendering("first"))
        memo.keep(Rendering("second"))
        let again = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 30))
        #expect(again.memo === memo)
        #expect((again.memo?.value as? Rendering)?.text == "first")
        // Another token's entry has a memo of its own.
        let other = Mint.firebase(uid: "memo-other")
        _ = try cached.verify(other, keys: keys, now: Mint.at(Mint.t0 + 30))
        let otherMemo = try #require(try cached.verify(other, keys: keys, now: Mint.at(Mint.t0 + 40)).memo)
        #expect(otherMemo !== memo)
        #expect(otherMemo.value == nil)
    }

    @Test func theAsynchronousPathHitsToo() async throws {
        let (cached, _, fullRuns) = try Self.pair()
        let token = Mint.firebase(uid: "async-user")
        for offset in [10.0, 20, 30] {
            let verified = try await cached.verify(token, now: Mint.at(Mint.t0 + offset))
            #expect(verified.subject == "async-user")
        }
        #expect(fullRuns.count == 1)
    }

    @Test func failuresAreNotCached() throws {
        let (cached, _, fullRuns) = try Self.pair()
        let expired = Mint.firebase(uid: "late", iat: Mint.t0 - 7200)
        let otherProject = Mint.rsa.token(payload: "{\"iss\":\"https://securetoken.google.com/elsewhere\",\"aud\":\"elsewhere\",\"sub\":\"u\",\"iat\":\(Int(Mint.t0)),\"exp\":\(Int(Mint.t0 + 3600)),\"auth_time\":\(Int(Mint.t0))}")
        for _ in 0..<2 {
            #expect(throws: TokenError(.expired, claim: "exp", "")) { try cached.verify(expired, keys: Mint.rsa.keySet, now: Mint.at(Mint.t0)) }
            #expect(throws: TokenError(.wrongAudience, claim: "aud", "")) { try cached.verify(otherProject, keys: Mint.rsa.keySet, now: Mint.at(Mint.t0)) }
        }
        #expect(cached.verifiedTokenCache?.count == 0)
        #expect(fullRuns.count == 0, "both fail before the profile's rules")
    }

    // MARK: Time, checked again at now

    @Test func expiryIsHonouredOnAHit() throws {
        let (cached, fresh, fullRuns) = try Self.pair()
        let token = Mint.firebase(uid: "expiring")
        let exp = Mint.t0 + 3600
        let keys = Mint.rsa.keySet
        _ = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0))
        // Within the 60 s leeway: still a hit.
        _ = try cached.verify(token, keys: keys, now: Mint.at(exp + 59))
        #expect(fullRuns.count == 1)
        // Past exp + leeway: the same error as without a cache, and the entry is gone.
        let late = Mint.at(exp + 60)
        let verdict = Verdict { () throws(TokenError) in try cached.verify(token, keys: keys, now: late) }
        #expect(verdict.code == .expired)
        #expect(verdict == Verdict { () throws(TokenError) in try fresh.verify(token, keys: keys, now: late) })
        #expect(cached.verifiedTokenCache?.count == 0)
    }

    @Test(arguments: [
        // (what, nbf, iat, auth_time, cached at, checked at, expected code, claim)
        ("nbf", 100.0, 100.0, 90.0, "nbf"),
        ("iat", nil, 100.0, 30.0, "iat"),
        ("auth_time", nil, 30.0, 100.0, "auth_time"),
    ] as [(String, Double?, Double, Double, String)])
    func timesInTheFutureOfAnEarlierNow(what: String, nbf: Double?, iat: Double, authTime: Double, claim: String) throws {
        let (cached, fresh, fullRuns) = try Self.pair()
        let token = Mint.firebase(uid: "future-\(what)", iat: Mint.t0 + iat, exp: Mint.t0 + 3600,
                                  authTime: Mint.t0 + authTime, nbf: nbf.map { Mint.t0 + $0 })
        let keys = Mint.rsa.keySet
        _ = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 100))
        #expect(cached.verifiedTokenCache?.count == 1)
        // 100 s earlier, more than the leeway before the claim: refused as a fresh verification refuses it.
        let earlier = Mint.at(Mint.t0)
        let verdict = Verdict { () throws(TokenError) in try cached.verify(token, keys: keys, now: earlier) }
        let expected = Verdict { () throws(TokenError) in try fresh.verify(token, keys: keys, now: earlier) }
        #expect(verdict == expected)
        #expect(verdict.code == (what == "nbf" ? .notYetValid : .issuedInFuture))
        if case .invalid(_, let got, _) = verdict { #expect(got == claim) }
        // Within the leeway of the claim, the entry serves again.
        let runs = fullRuns.count
        _ = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 41))
        #expect(fullRuns.count == runs)
    }

    // MARK: Nonce and state-dependent rules

    @Test func aNonceIsCheckedOnEveryHit() throws {
        let raw = "raw-nonce-for-the-cache-test"
        let (cached, fresh, fullRuns) = try Self.pair()
        let token = Mint.firebase(uid: "nonce-user", extra: "\"nonce\":\"\(SHA256.hexDigest(utf8: raw))\"")
        let keys = Mint.rsa.keySet
        let now = Mint.at(Mint.t0 + 5)
        _ = try cached.verify(token, keys: keys, now: now, nonce: .sha256Hex(raw))
        for wrong in [Nonce.sha256Hex("another-raw-nonce"), .exact(raw)] {
            let verdict = Verdict { () throws(TokenError) in try cached.verify(token, keys: keys, now: now, nonce: wrong) }
            #expect(verdict.code == .nonceMismatch)
            #expect(verdict == Verdict { () throws(TokenError) in try fresh.verify(token, keys: keys, now: now, nonce: wrong) })
        }
        let runs = fullRuns.count
        _ = try cached.verify(token, keys: keys, now: now, nonce: .sha256Hex(raw))
        _ = try cached.verify(token, keys: keys, now: now)
        #expect(fullRuns.count == runs, "the right nonce, or none, is a hit")
    }

    @Test func aRevocationAfterCachingRefusesTheHit() async throws {
        let revocations = MutableRevocations()
        let profile = Profile.firebase(projectID: Mint.projectID, revocation: revocations)
        let (cached, fresh, fullRuns) = try Self.pair(profile)
        let token = Mint.firebase(uid: "to-revoke", authTime: Mint.t0 - 30)
        let keys = Mint.rsa.keySet
        _ = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0))
        _ = try await cached.verify(token, now: Mint.at(Mint.t0 + 1))
        #expect(fullRuns.count == 1)

        revocations.revoke("to-revoke", at: Mint.at(Mint.t0 - 10))
        let now = Mint.at(Mint.t0 + 2)
        let verdict = Verdict { () throws(TokenError) in try cached.verify(token, keys: keys, now: now) }
        #expect(verdict.code == .revoked)
        #expect(verdict == Verdict { () throws(TokenError) in try fresh.verify(token, keys: keys, now: now) })
        await #expect(throws: TokenError(.revoked, claim: "auth_time", "")) { try await cached.verify(token, now: now) }

        revocations.revoke("to-revoke", at: nil)
        let runs = fullRuns.count
        _ = try cached.verify(token, keys: keys, now: now)
        #expect(fullRuns.count == runs, "the entry outlived the refusal and serves again")
    }

    @Test func rulesThatDependOnMoreThanTheClaimsRunOnEveryHit() throws {
        let everyTime = CountingRule(dependsOnlyOnClaims: false)
        let (cached, _, fullRuns) = try Self.pair(Self.firebase.adding(everyTime))
        let token = Mint.firebase(uid: "rule-user")
        for offset in 0..<5 { _ = try cached.verify(token, keys: Mint.rsa.keySet, now: Mint.at(Mint.t0 + Double(offset))) }
        #expect(fullRuns.count == 1)
        #expect(everyTime.count == 5)
    }

    // MARK: Keys

    @Test func aKeyRemovedFromTheSourceStopsItsCachedTokens() async throws {
        let source = SwappableKeySource(JWKSet(keys: [Mint.rsa.publicKey, Mint.otherRSA.publicKey]))
        let fullRuns = CountingRule(dependsOnlyOnClaims: true)
        let cached = try IDTokenVerifier(profile: Self.firebase.adding(fullRuns), keys: source, cache: .capacity(100))
        let token = Mint.firebase(uid: "key-user")
        let now = Mint.at(Mint.t0 + 1)
        _ = try await cached.verify(token, now: now)
        _ = try await cached.verify(token, now: now)
        #expect(fullRuns.count == 1)

        // The provider withdraws the key: the cached token is refused as a fresh verification refuses it.
        source.set(Mint.otherRSA.keySet)
        await #expect(throws: TokenError(.unknownKey, claim: "kid", "")) { try await cached.verify(token, now: now) }
        #expect(throws: TokenError(.unknownKey, claim: "kid", "")) { try cached.verify(token, keys: Mint.otherRSA.keySet, now: now) }

        // The same key material reloaded (a new key object): verified afresh once, then cached again.
        let reloaded = try PublicKey(spkiDER: Mint.rsa.spki, algorithm: .rs256, kid: "cache-rsa-1")
        source.set(JWKSet(keys: [reloaded]))
        _ = try await cached.verify(token, now: now)
        _ = try await cached.verify(token, now: now)
        #expect(fullRuns.count == 2)

        // No usable key set at all: nothing is served.
        source.set(nil)
        await #expect(throws: TokenError(.keysUnavailable, "")) { try await cached.verify(token, now: now) }
    }

    @Test func aTokenWithoutKidIsServedOnlyWhileTheSetHasOneKey() throws {
        let (cached, fresh, fullRuns) = try Self.pair(Mint.oidcProfile, keys: Mint.ec.keySet)
        let token = Mint.oidc(uid: "no-kid", withKid: false)
        let now = Mint.at(Mint.t0 + 1)
        _ = try cached.verify(token, keys: Mint.ec.keySet, now: now)
        _ = try cached.verify(token, keys: Mint.ec.keySet, now: now)
        #expect(fullRuns.count == 1)
        // The same key object, but no longer the only key: a header without kid picks none.
        let two = JWKSet(keys: [Mint.ec.publicKey, Mint.rsa.publicKey])
        let verdict = Verdict { () throws(TokenError) in try cached.verify(token, keys: two, now: now) }
        #expect(verdict.code == .unknownKey)
        #expect(verdict == Verdict { () throws(TokenError) in try fresh.verify(token, keys: two, now: now) })
    }

    // MARK: Replay

    @Test func aReplayCacheBypassesTheCache() async throws {
        let replay = SetReplayCache()
        let verifier = try IDTokenVerifier(profile: Self.firebase, keys: Mint.rsa.keySet, replayCache: replay,
                                           cache: .capacity(100))
        #expect(verifier.verifiedTokenCache == nil)
        let token = Mint.firebase(uid: "replayed-user")
        _ = try verifier.verify(token, keys: Mint.rsa.keySet, now: Mint.at(Mint.t0))
        #expect(throws: TokenError(.replayed, "")) { try verifier.verify(token, keys: Mint.rsa.keySet, now: Mint.at(Mint.t0 + 1)) }
        await #expect(throws: TokenError(.replayed, "")) { try await verifier.verify(token, now: Mint.at(Mint.t0 + 2)) }
    }

    // MARK: Bounds

    @Test func theCountNeverExceedsTheCapacity() throws {
        let (cached, _, _) = try Self.pair(Mint.oidcProfile, keys: Mint.ec.keySet, capacity: 100)
        let cache = try #require(cached.verifiedTokenCache)
        #expect(cache.capacity <= 100 && cache.capacity >= 90)
        let now = Mint.at(Mint.t0 + 1)
        for n in 0..<400 {
            let token = Mint.oidc(uid: "bulk-\(n)")
            let verified = try cached.verify(token, keys: Mint.ec.keySet, now: now)
            #expect(verified.subject == "bulk-\(n)")
            #expect(cache.count <= cache.capacity)
        }
        #expect(cache.count >= cache.capacity / 2, "distinct tokens fill most buckets")
        cache.removeAll()
        #expect(cache.count == 0)
    }

    @Test func aTokenServedSinceTheHandPassedOutlivesOneNeverServed() throws {
        // Eight slots in one bucket: the ninth token evicts one of the eight.
        let (cached, _, fullRuns) = try Self.pair(Mint.oidcProfile, keys: Mint.ec.keySet, capacity: 8)
        #expect(cached.verifiedTokenCache?.capacity == 8)
        let tokens = (0..<9).map { Mint.oidc(uid: "clock-\($0)") }
        let keys = Mint.ec.keySet
        let now = Mint.at(Mint.t0 + 1)
        for token in tokens.prefix(8) { _ = try cached.verify(token, keys: keys, now: now) }
        _ = try cached.verify(tokens[3], keys: keys, now: now)  // served: marked
        #expect(fullRuns.count == 8)
        _ = try cached.verify(tokens[8], keys: keys, now: now)
        #expect(cached.verifiedTokenCache?.count == 8)
        _ = try cached.verify(tokens[3], keys: keys, now: now)
        #expect(fullRuns.count == 9, "the served token is still cached")
    }

    @Test func anExpiredEntryMakesRoomBeforeALiveOne() throws {
        let (cached, _, fullRuns) = try Self.pair(Mint.oidcProfile, keys: Mint.ec.keySet, capacity: 8)
        let keys = Mint.ec.keySet
        let shortLived = Mint.oidc(uid: "short", exp: Mint.t0 + 100)
        let live = (0..<7).map { Mint.oidc(uid: "live-\($0)") }
        let later = Mint.at(Mint.t0 + 1000)
        _ = try cached.verify(shortLived, keys: keys, now: Mint.at(Mint.t0 + 1))
        for token in live { _ = try cached.verify(token, keys: keys, now: Mint.at(Mint.t0 + 1)) }
        _ = try cached.verify(Mint.oidc(uid: "newcomer"), keys: keys, now: later)
        #expect(fullRuns.count == 9)
        for token in live { _ = try cached.verify(token, keys: keys, now: later) }
        #expect(fullRuns.count == 9, "the newcomer took the expired token's slot; every live one is still cached")
    }

    // MARK: Exact match

    @Test(arguments: [false, true])
    func aTokenDifferingInOneByteIsNeverServed(forcedCollisions: Bool) throws {
        var configuration = VerifiedTokenCache.Configuration(capacity: 64)
        configuration.collidesForTesting = forcedCollisions
        let fullRuns = CountingRule(dependsOnlyOnClaims: true)
        let cached = try IDTokenVerifier(profile: Self.firebase.adding(fullRuns), keys: Mint.rsa.keySet, cache: configuration)
        let fresh = try IDTokenVerifier(profile: Self.firebase, keys: Mint.rsa.keySet)
        let keys = Mint.rsa.keySet
        let now = Mint.at(Mint.t0 + 1)
        let token = Mint.firebase(uid: "exact-user")
        _ = try cached.verify(token, keys: keys, now: now)

        var variants: [String] = []
        let bytes = Array(token.utf8)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        // One byte changed in the header, the payload and the signature; one byte removed; one added.
        for position in [5, dots[0] + 10, dots[1] + 10, bytes.count - 2] {
            var changed = bytes
            changed[position] = changed[position] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            variants.append(String(decoding: changed, as: UTF8.self))
        }
        variants.append(String(token.dropLast()))
        variants.append(token + "A")
        for variant in variants {
            let verdict = Verdict { () throws(TokenError) in try cached.verify(variant, keys: keys, now: now) }
            #expect(verdict.code != nil, "an altered token must not verify")
            #expect(verdict == Verdict { () throws(TokenError) in try fresh.verify(variant, keys: keys, now: now) })
        }

        // Another valid token in the same bucket gets its own claims, not the first token's.
        let other = Mint.firebase(uid: "exact-other")
        #expect(try cached.verify(other, keys: keys, now: now).subject == "exact-other")
        #expect(try cached.verify(other, keys: keys, now: now).subject == "exact-other")
        #expect(try cached.verify(token, keys: keys, now: now).subject == "exact-user")
        #expect(fullRuns.count == 2)
    }

    @Test func eachVerifierHasItsOwnCache() throws {
        let token = Mint.firebase(uid: "two-projects")
        let mine = try IDTokenVerifier(profile: Self.firebase, keys: Mint.rsa.keySet, cache: .capacity(100))
        let theirs = try IDTokenVerifier(profile: .firebase(projectID: "another-project"), keys: Mint.rsa.keySet,
                                         cache: .capacity(100))
        _ = try mine.verify(token, keys: Mint.rsa.keySet, now: Mint.at(Mint.t0))
        #expect(throws: TokenError(.wrongAudience, claim: "aud", "")) {
            try theirs.verify(token, keys: Mint.rsa.keySet, now: Mint.at(Mint.t0))
        }
    }

    // MARK: Concurrency

    @Test func concurrentHitsAndMissesGiveTheVerdictsOfNoCache() throws {
        // A small cache, so that evictions race with hits; tokens that are valid, expire in the middle of the
        // run's times, are not yet valid early on, or carry a nonce some calls get wrong.
        let revocations = MutableRevocations()
        revocations.revoke("ec-revoked", at: Mint.at(Mint.t0 + 10))
        let profile = Mint.oidcProfile.adding(RevocationRule(revocations))
        let (cached, fresh, _) = try Self.pair(profile, keys: Mint.ec.keySet, capacity: 16)
        let keys = Mint.ec.keySet
        var tokens = (0..<24).map { Mint.oidc(uid: "ec-\($0)") }
        tokens += (0..<8).map { Mint.oidc(uid: "ec-short-\($0)", exp: Mint.t0 + 200) }
        tokens.append(Mint.ec.token(payload: "{\"iss\":\"https://issuer.example.com\",\"aud\":\"cache-client\",\"sub\":\"ec-revoked\",\"iat\":\(Int(Mint.t0)),\"exp\":\(Int(Mint.t0 + 3600)),\"auth_time\":\(Int(Mint.t0))}"))
        tokens.append(Mint.ec.token(payload: "{\"iss\":\"https://issuer.example.com\",\"aud\":\"cache-client\",\"sub\":\"ec-nbf\",\"iat\":\(Int(Mint.t0)),\"nbf\":\(Int(Mint.t0 + 150)),\"exp\":\(Int(Mint.t0 + 3600))}"))
        tokens.append(Mint.ec.token(payload: "{\"iss\":\"https://issuer.example.com\",\"aud\":\"cache-client\",\"sub\":\"ec-nonce\",\"nonce\":\"n-1\",\"iat\":\(Int(Mint.t0)),\"exp\":\(Int(Mint.t0 + 3600))}"))
        let times = [0.0, 50, 100, 250, 300].map { Mint.at(Mint.t0 + $0) }
        let nonces: [Nonce?] = [nil, .exact("n-1"), .exact("n-2")]
        let cases = tokens.flatMap { token in times.flatMap { now in nonces.map { (token, now, $0) } } }
        let expected = cases.map { c in Verdict { () throws(TokenError) in try fresh.verify(c.0, keys: keys, now: c.1, nonce: c.2) } }
        #expect(Set(expected.map { $0.code?.rawValue ?? "valid" })
                == ["valid", "expired", "not_yet_valid", "nonce_mismatch", "revoked"], "the cases cover every verdict")

        let mismatches = raceOnThreads(6) { thread -> Int in
            var generator = SystemRandomNumberGenerator()
            var wrong = 0
            for _ in 0..<1500 {
                let index = Int.random(in: 0..<cases.count, using: &generator)
                let c = cases[index]
                let verdict = Verdict { () throws(TokenError) in try cached.verify(c.0, keys: keys, now: c.1, nonce: c.2) }
                if verdict != expected[index] { wrong += 1 }
            }
            return wrong
        }
        #expect(mismatches == [0, 0, 0, 0, 0, 0])
        let cache = try #require(cached.verifiedTokenCache)
        #expect(cache.count <= cache.capacity)
    }
}
