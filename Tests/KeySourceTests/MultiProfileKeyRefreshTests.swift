import Foundation
@testable import IDTokenKit
import TestSupport
import Testing

/// A ``MultiProfileVerifier`` over two profiles whose keys come from two loopback HTTPS-cache sources: key events of
/// one profile never cost the other its verified-token cache, and a refetch that brings the same keys costs nobody.
@Suite struct MultiProfileKeyRefreshTests {
    static let t0 = 1_700_000_000.0
    static let one = TestSigner(.rs256, kid: "one-1")
    static let two = TestSigner(.rs256, kid: "two-1")
    static let twoRotated = TestSigner(.rs256, kid: "two-2")

    static func jwks(_ signers: TestSigner...) -> [UInt8] {
        Array(("{\"keys\":[" + signers.map { $0.jwk(kid: $0.kid, alg: "RS256") }.joined(separator: ",") + "]}").utf8)
    }

    static func token(_ signer: TestSigner, issuer: String, subject: String) -> String {
        signer.token(payload: "{\"iss\":\"\(issuer)\",\"aud\":\"app\",\"sub\":\"\(subject)\",\"iat\":\(Int(t0)),\"exp\":\(Int(t0 + 3600))}")
    }

    struct Fixture {
        let verifier: MultiProfileVerifier
        let sources: [HTTPKeySource]
        let servers: [ScriptedHTTPServer]
        let clock: ManualClock

        /// Whether `profile`'s verified-token cache answers `token` without a full verification.
        func hits(_ token: String, _ profile: Int) -> Bool {
            let member = verifier.members[profile].verifier
            return member.verifiedTokenCache!.verifiedToken(token, keySource: member.keySource, now: MultiProfileKeyRefreshTests.t0 + 20,
                                                            nonce: nil) != nil
        }

        func verify(_ token: String) async -> ProfileVerification {
            await verifier.verify(token, now: Date(timeIntervalSince1970: MultiProfileKeyRefreshTests.t0 + 10))
        }
    }

    static func withFixture(_ body: (Fixture) async throws -> Void) async throws {
        let serverOne = try await ScriptedHTTPServer.start(.json(jwks(one)))
        let serverTwo = try await ScriptedHTTPServer.start(.json(jwks(two)))
        let clock = ManualClock()
        var policy = KeyCachePolicy()
        policy.refreshesInBackground = false
        let sources = try [serverOne, serverTwo].map {
            try HTTPKeySource(url: $0.url, cachePolicy: policy, limits: HTTPKeySourceTests.limits, clock: clock)
        }
        let members = try [("one", "https://one.example"), ("two", "https://two.example")].enumerated().map { index, profile in
            MultiProfileVerifier.Member(name: profile.0, verifier: try IDTokenVerifier(
                profile: .oidc(issuers: [profile.1], audiences: ["app"], algorithms: [.rs256]), keys: sources[index],
                cache: .capacity(100)))
        }
        let fixture = Fixture(verifier: try MultiProfileVerifier(members), sources: sources, servers: [serverOne, serverTwo], clock: clock)
        do { try await body(fixture) } catch {
            for source in sources { await source.shutdown() }
            for server in fixture.servers { await server.stop() }
            throw error
        }
        for source in sources { await source.shutdown() }
        for server in fixture.servers { await server.stop() }
    }

    @Test("a key refresh that changes one profile's keys leaves the other profile's cached tokens warm")
    func refreshOfOneProfileKeepsTheOthersCache() async throws {
        try await Self.withFixture { fixture in
            let tokenOne = Self.token(Self.one, issuer: "https://one.example", subject: "u1")
            let tokenTwo = Self.token(Self.two, issuer: "https://two.example", subject: "u2")
            // The first verifications wait for each source's first fetch, then are cached by their profile.
            let first = await fixture.verify(tokenOne)
            #expect(first.profile == "one" && first.isValid, "\(String(describing: first.error))")
            let second = await fixture.verify(tokenTwo)
            #expect(second.profile == "two" && second.isValid, "\(String(describing: second.error))")
            #expect(fixture.hits(tokenOne, 0) && fixture.hits(tokenTwo, 1))

            // Profile two's provider rotates: a new key beside the old one, fetched.
            fixture.servers[1].reply(.json(Self.jwks(Self.two, Self.twoRotated)))
            try await fixture.sources[1].refresh()
            #expect(fixture.sources[1].currentKeys()?.kids.sorted() == ["two-1", "two-2"])
            #expect(fixture.hits(tokenOne, 0), "profile one's cache must survive profile two's refresh")
            #expect(!fixture.hits(tokenTwo, 1), "profile two's keys changed: its cached tokens are verified again")
            #expect(await fixture.verify(tokenTwo).isValid)
            #expect(fixture.hits(tokenTwo, 1))
        }
    }

    @Test("a refetch that brings the same keys, or fails, keeps the key set and every cached token")
    func unchangedOrFailedRefetchKeepsTheCache() async throws {
        try await Self.withFixture { fixture in
            let tokenOne = Self.token(Self.one, issuer: "https://one.example", subject: "u1")
            #expect(await fixture.verify(tokenOne).isValid)
            let before = try #require(fixture.sources[0].currentKeys())
            #expect(fixture.hits(tokenOne, 0))

            try await fixture.sources[0].refresh()
            #expect(fixture.servers[0].requestCount == 2)
            #expect(fixture.sources[0].currentKeys()?.keys.first === before.keys.first, "the same keys keep their objects")
            #expect(fixture.hits(tokenOne, 0))

            fixture.servers[0].reply(.respond(status: 500, headers: [], body: []))
            await #expect(throws: KeyFetchError.self) { try await fixture.sources[0].refresh() }
            #expect(fixture.hits(tokenOne, 0))
        }
    }

    @Test("an unknown kid asks only its profile's source, once, and the token is then verified")
    func unknownKidRefreshesItsProfilesSource() async throws {
        try await Self.withFixture { fixture in
            let tokenOne = Self.token(Self.one, issuer: "https://one.example", subject: "u1")
            #expect(await fixture.verify(tokenOne).isValid)
            #expect(await fixture.verify(Self.token(Self.two, issuer: "https://two.example", subject: "u2")).isValid)
            #expect(fixture.servers.map(\.requestCount) == [1, 1])

            // A token signed with a key profile two's provider has just published, past the source's cooldown for
            // unknown kids (30 s from its last fetch).
            fixture.clock.advance(by: 30)
            fixture.servers[1].reply(.json(Self.jwks(Self.two, Self.twoRotated)))
            let rotated = Self.token(Self.twoRotated, issuer: "https://two.example", subject: "u3")
            let outcome = await fixture.verify(rotated)
            #expect(outcome.isValid && outcome.profile == "two", "\(String(describing: outcome.error))")
            #expect(outcome.verifiedToken?.kid == "two-2")
            #expect(fixture.servers.map(\.requestCount) == [1, 2])
            #expect(fixture.hits(tokenOne, 0))

            // Within the cooldown, a made-up kid is refused without another fetch.
            let forged = Self.twoRotated.token(header: "{\"alg\":\"RS256\",\"kid\":\"made-up\"}",
                                               payload: "{\"iss\":\"https://two.example\",\"aud\":\"app\",\"sub\":\"x\",\"exp\":\(Int(Self.t0 + 3600))}")
            #expect(await fixture.verify(forged).error?.code == .unknownKey)
            #expect(fixture.servers.map(\.requestCount) == [1, 2])
        }
    }

    // MARK: Refusals of the pipeline itself

    /// A replay cache that can only answer asynchronously (as Redis does).
    final class AsyncOnlyReplayCache: ReplayCache, @unchecked Sendable {
        private let inner = MemoryReplayCache(capacity: 100)
        func insertIfAbsent(_ entry: ReplayEntry, now: Int64) async throws(TokenError) -> Bool {
            try await inner.insertIfAbsent(entry, now: now)
        }
    }

    static func fixedVerifier(replayCache: (any ReplayCache)? = nil) throws -> MultiProfileVerifier {
        try MultiProfileVerifier([
            .init(name: "one", verifier: try IDTokenVerifier(profile: .oidc(issuers: ["https://one.example"], audiences: ["app"], algorithms: [.rs256]),
                                                             keys: Self.one.keySet, replayCache: replayCache)),
            .init(name: "two", verifier: try IDTokenVerifier(profile: .oidc(issuers: ["https://two.example"], audiences: ["app"], algorithms: [.rs256]),
                                                             keys: Self.two.keySet)),
        ])
    }

    @Test("a profile name no member has, and an issuer no profile accepts, are wrong_issuer before any signature check")
    func unknownProfileAndIssuer() async throws {
        let verifier = try Self.fixedVerifier()
        let token = Self.token(Self.one, issuer: "https://one.example", subject: "u1")
        let named = verifier.evaluate(token, at: Self.t0 + 10, profile: "three")
        #expect(named.error?.code == .wrongIssuer && named.profile == nil)
        #expect(named.error?.message.contains("one, two") == true, "\(named.error?.message ?? "")")
        let foreign = await verifier.verify(Self.token(Self.one, issuer: "https://three.example", subject: "u"), now: Date(timeIntervalSince1970: Self.t0 + 10))
        #expect(foreign.error?.code == .wrongIssuer && foreign.error?.claim == "iss" && !foreign.signatureVerified && foreign.profile == nil)
        #expect(foreign.claims?["iss"]?.string == "https://three.example", "the report keeps what the token says")
        // The same token named for its own profile verifies; named for the other, that profile refuses it.
        #expect(verifier.evaluate(token, at: Self.t0 + 10, profile: "one").isValid)
        #expect(verifier.evaluate(token, at: Self.t0 + 10, profile: "two").error?.code == .unknownKey)
    }

    @Test("a profile whose source has no keys is keys_unavailable, without waiting in the synchronous form")
    func keysUnavailable() async throws {
        let closed = try await ScriptedHTTPServer.start(.drop)
        let source = try HTTPKeySource(url: closed.url, limits: HTTPKeySourceTests.limits, clock: ManualClock())
        let verifier = MultiProfileVerifier(try IDTokenVerifier(profile: .oidc(issuers: ["https://one.example"], audiences: ["app"], algorithms: [.rs256]),
                                                                keys: source))
        let token = Self.token(Self.one, issuer: "https://one.example", subject: "u1")
        #expect(verifier.evaluate(token, at: Self.t0 + 10).error?.code == .keysUnavailable)
        #expect(await verifier.verify(token, now: Date(timeIntervalSince1970: Self.t0 + 10)).error?.code == .keysUnavailable)
        #expect(verifier.profilesWithoutKeys == ["oidc"])
        await source.shutdown()
        await closed.stop()
    }

    @Test("a replay cache that only answers asynchronously: the asynchronous form accepts once, the synchronous refuses")
    func asynchronousReplayCache() async throws {
        let verifier = try Self.fixedVerifier(replayCache: AsyncOnlyReplayCache())
        let token = Self.token(Self.one, issuer: "https://one.example", subject: "u1")
        let at = Date(timeIntervalSince1970: Self.t0 + 10)
        let first = await verifier.verify(token, now: at)
        #expect(first.isValid && first.profile == "one")
        let again = await verifier.verify(token, now: at)
        #expect(again.error?.code == .replayed && again.signatureVerified)
        let synchronous = verifier.evaluate(Self.token(Self.one, issuer: "https://one.example", subject: "u2"), at: Self.t0 + 10)
        #expect(synchronous.error?.code == .replayStoreUnavailable && synchronous.error?.message.contains("synchronously") == true)
    }
}
