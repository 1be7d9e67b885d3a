import Foundation
import IDTokenKit
import TestSupport
import Testing

/// HTTPKeySource against a real HTTP server on a loopback port; assertions count the requests it received.
@Suite struct HTTPKeySourceTests {
    static let jwksA = Fixtures.bytes("test-keys/jwks-a.json")
    static let jwksB = Fixtures.bytes("test-keys/jwks-b.json")

    /// Short floor and a fixed refresh point so that the test clock's arithmetic is exact.
    static func policy(background: Bool = false) -> KeyCachePolicy {
        var policy = KeyCachePolicy()
        policy.minimumLifetime = .seconds(60)
        policy.refreshAhead = 0.8...0.8
        policy.refreshesInBackground = background
        return policy
    }

    // Generous: a fetch from the loopback server that times out on a loaded machine (the whole suite running in
    // parallel on two cores) would leave a source waiting for a retry on the manual clock that never comes. The
    // tests of timeouts set their own short limits.
    static let limits = KeyFetchLimits(connectTimeout: .seconds(10), totalTimeout: .seconds(25), maximumBodyBytes: 1 << 20)

    static func withServer(_ initial: ScriptedHTTPServer.Reply,
                           _ body: (ScriptedHTTPServer) async throws -> Void) async throws {
        let server = try await ScriptedHTTPServer.start(initial)
        do { try await body(server) } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func source(_ server: ScriptedHTTPServer, clock: ManualClock, policy: KeyCachePolicy = policy(),
                       limits: KeyFetchLimits = limits, cacheFile: String? = nil,
                       log: CapturedLog = CapturedLog()) throws -> HTTPKeySource {
        try HTTPKeySource(url: server.url, cachePolicy: policy, limits: limits, clock: clock, cacheFilePath: cacheFile,
                          logger: log.logger())
    }

    // MARK: Single flight and the unknown-kid cooldown

    @Test func concurrentFirstLoadsShareOneFetch() async throws {
        try await Self.withServer(.delayed(milliseconds: 200, .json(Self.jwksA))) { server in
            let source = try Self.source(server, clock: ManualClock())
            let results = await withTaskGroup(of: [String]?.self) { group in
                for _ in 0..<1000 {
                    group.addTask { try? await source.keys(refreshingFor: nil).sortedKids }
                }
                return await group.reduce(into: [[String]?]()) { $0.append($1) }
            }
            #expect(results.count == 1000)
            #expect(results.allSatisfy { $0 == ["test-ec-1", "test-rsa-1", "test-rsa-2"] })
            #expect(server.requestCount == 1)
            await source.shutdown()
        }
    }

    @Test func unknownKidsRefetchAtMostOncePerCooldown() async throws {
        try await Self.withServer(.delayed(milliseconds: 100, .json(Self.jwksA))) { server in
            let clock = ManualClock()
            let source = try Self.source(server, clock: clock)
            _ = try await source.keys(refreshingFor: nil)
            #expect(server.requestCount == 1)
            server.reply(.delayed(milliseconds: 100, .json(Self.jwksB)))

            // Within the cooldown (30 s by default): 1,000 made-up kids, no request, the current set at once.
            clock.advance(by: 29)
            let started = ContinuousClock.now
            let within = try await Self.askConcurrently(source, count: 1000, kid: { "made-up-\($0)" })
            // Generous for a loaded 2-core machine; the request count below is the real assertion.
            #expect(ContinuousClock.now - started < .seconds(60))
            #expect(server.requestCount == 1)
            #expect(within.allSatisfy { $0 == ["test-ec-1", "test-rsa-1", "test-rsa-2"] })

            // After the cooldown: 1,000 concurrent unknown kids share exactly one refetch, which brings the rotation.
            clock.advance(by: 1)
            let after = try await Self.askConcurrently(source, count: 1000, kid: { "made-up-\($0)" })
            #expect(server.requestCount == 2)
            #expect(after.allSatisfy { $0 == ["test-rsa-2", "test-rsa-3"] })

            // And the next burst, still within the new cooldown, causes nothing.
            clock.advance(by: 10)
            _ = try await Self.askConcurrently(source, count: 1000, kid: { "made-up-again-\($0)" })
            #expect(server.requestCount == 2)
            await source.shutdown()
        }
    }

    static func askConcurrently(_ source: HTTPKeySource, count: Int, kid: @escaping @Sendable (Int) -> String) async throws -> [[String]] {
        try await withThrowingTaskGroup(of: [String].self) { group in
            for i in 0..<count {
                group.addTask { try await source.keys(refreshingFor: kid(i)).sortedKids }
            }
            return try await group.reduce(into: [[String]]()) { $0.append($1) }
        }
    }

    @Test func rotationIsPickedUpAfterTheCooldown() async throws {
        try await Self.withServer(.json(Self.jwksA)) { server in
            let clock = ManualClock()
            let source = try Self.source(server, clock: clock)
            let token = try #require(Fixtures.testTokens["test-rsa-3"])
            var keys = try await source.keys(refreshingFor: nil)
            #expect(throws: TokenError(.unknownKey, claim: "kid", "")) { try CompactJWS.verify(token, keys: keys, allowed: [.rs256]) }

            server.reply(.json(Self.jwksB))   // the provider rotates
            clock.advance(by: 5)
            keys = try await source.keys(refreshingFor: "test-rsa-3")
            #expect(keys.key(kid: "test-rsa-3") == nil, "within the cooldown the old set is returned")
            #expect(server.requestCount == 1)

            clock.advance(by: 30)
            keys = try await source.keys(refreshingFor: "test-rsa-3")
            #expect(server.requestCount == 2)
            _ = try CompactJWS.verify(token, keys: keys, allowed: [.rs256])
            #expect(source.currentKeys()?.sortedKids == ["test-rsa-2", "test-rsa-3"])
            // A kid the set has never causes a fetch.
            _ = try await source.keys(refreshingFor: "test-rsa-2")
            #expect(server.requestCount == 2)
            await source.shutdown()
        }
    }

    // MARK: Background refresh and the hot path

    @Test func refreshesInTheBackgroundBeforeMaxAgeAndNeverOnTheHotPath() async throws {
        try await Self.withServer(.json(Self.jwksA, headers: [("Cache-Control", "public, max-age=600")])) { server in
            let clock = ManualClock()
            let t0 = clock.now()
            let source = try Self.source(server, clock: clock, policy: Self.policy(background: true))
            // The background task loads the set without anyone asking.
            #expect(await eventually { source.currentKeys() != nil })
            #expect(server.requestCount == 1)
            #expect(await eventually { clock.pendingDeadlines == [t0 + 480] }, "refresh planned at 80 % of max-age")

            // The hot path never fetches, however often it is read, even past the refresh point.
            for _ in 0..<100_000 { _ = source.currentKeys() }
            clock.advance(by: 479)
            for _ in 0..<100_000 { #expect(source.currentKeys() != nil) }
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.requestCount == 1)

            // At 80 % of max-age the background task refetches, before max-age runs out.
            server.reply(.json(Self.jwksB, headers: [("Cache-Control", "max-age=600")]))
            clock.advance(by: 1)
            #expect(await eventually { server.requestCount == 2 })
            #expect(await eventually { source.currentKeys()?.sortedKids == ["test-rsa-2", "test-rsa-3"] })
            let status = source.status()
            #expect(status.fetchedAt == t0 + 480)
            #expect(!status.isStale)
            #expect(await eventually { clock.pendingDeadlines == [t0 + 480 + 480] })
            await source.shutdown()
        }
    }

    @Test func aShorterLifetimeFetchedForAnUnknownKidMovesTheBackgroundRefresh() async throws {
        try await Self.withServer(.json(Self.jwksA, headers: [("Cache-Control", "max-age=600")])) { server in
            let clock = ManualClock()
            let t0 = clock.now()
            let source = try Self.source(server, clock: clock, policy: Self.policy(background: true))
            #expect(await eventually { clock.pendingDeadlines == [t0 + 480] })

            // A kid the set lacks, past the cooldown: the refetch brings a set that lives 100 s. The background
            // loop, asleep until 480 s, must refresh this one at 80 s of its life, before it goes stale.
            server.reply(.json(Self.jwksB, headers: [("Cache-Control", "max-age=100")]))
            clock.advance(by: 35)
            _ = try await source.keys(refreshingFor: "test-rsa-3")
            #expect(server.requestCount == 2)
            #expect(await eventually { clock.pendingDeadlines == [t0 + 35 + 80] }, "\(clock.pendingDeadlines.map { $0 - t0 })")
            clock.advance(by: 80)
            #expect(await eventually { server.requestCount == 3 })
            #expect(await eventually { source.status().fetchedAt == t0 + 115 })
            #expect(!source.status().isStale)
            await source.shutdown()
        }
    }

    @Test func currentKeysNeverFetchesEvenWhenDueOrEmpty() async throws {
        try await Self.withServer(.json(Self.jwksA)) { server in
            let clock = ManualClock()
            let source = try Self.source(server, clock: clock)
            for _ in 0..<10_000 { #expect(source.currentKeys() == nil) }
            #expect(server.requestCount == 0)
            _ = try await source.keys(refreshingFor: nil)
            clock.advance(by: 7200)   // far past expiry (1 h default), within the staleness bound
            for _ in 0..<10_000 { #expect(source.currentKeys() != nil) }
            #expect(server.requestCount == 1)
            await source.shutdown()
        }
    }

    @Test func withoutBackgroundRefreshADueSetIsRefreshedWithoutWaiting() async throws {
        try await Self.withServer(.json(Self.jwksA, headers: [("Cache-Control", "max-age=100")])) { server in
            let clock = ManualClock()
            var limits = Self.limits
            limits.totalTimeout = .seconds(60)   // longer than the slow fetch below
            let source = try Self.source(server, clock: clock, limits: limits)
            _ = try await source.keys(refreshingFor: nil)
            // The refresh's answer is held back until the caller has its keys: a caller that waited for the
            // refresh would get them only when the 60 s total timeout gave up on it.
            server.reply(.held(.json(Self.jwksB)))
            clock.advance(by: 81)   // refresh point at 80 % of max-age
            let started = ContinuousClock.now
            let keys = try await source.keys(refreshingFor: nil)
            #expect(ContinuousClock.now - started < .seconds(50), "the caller waited for the refresh")
            #expect(keys.sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2"])
            // The refresh did start, and is still waiting for its answer.
            #expect(await eventually { server.heldCount == 1 })
            #expect(source.currentKeys()?.sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2"])
            server.releaseHeld()
            #expect(await eventually { source.currentKeys()?.sortedKids == ["test-rsa-2", "test-rsa-3"] })
            #expect(server.requestCount == 2)
            await source.shutdown()
        }
    }

    // MARK: Cache headers over HTTP

    @Test(arguments: [
        (["Cache-Control": "max-age=1000", "Age": "400"], 600.0),
        (["Cache-Control": "no-store"], 60.0),
        (["Cache-Control": "no-cache, max-age=3600"], 60.0),
        (["Cache-Control": "max-age=10"], 60.0),
        (["Cache-Control": "max-age=999999"], 86_400.0),
        (["Expires": "Tue, 14 Nov 2023 23:13:20 GMT", "Date": "Tue, 14 Nov 2023 22:13:20 GMT"], 3600.0),
        (["Expires": "0"], 60.0),
        ([:], 3600.0),
    ])
    func lifetimeFollowsTheResponseHeaders(headers: [String: String], expected: Double) async throws {
        try await Self.withServer(.json(Self.jwksA, headers: headers.map { ($0.key, $0.value) })) { server in
            let clock = ManualClock()
            let source = try Self.source(server, clock: clock)
            _ = try await source.keys(refreshingFor: nil)
            let status = source.status()
            let fetchedAt = try #require(status.fetchedAt)
            #expect(try #require(status.expiresAt) - fetchedAt == expected)
            await source.shutdown()
        }
    }

    // MARK: Failures keep the last good set

    @Test(arguments: FailureCase.allCases)
    func aFailedRefreshKeepsServingTheOldKeys(_ failure: FailureCase) async throws {
        try await Self.withServer(.json(Self.jwksA)) { server in
            let clock = ManualClock()
            var limits = Self.limits
            if failure == .hang { limits.totalTimeout = .seconds(1) }
            let source = try Self.source(server, clock: clock, limits: limits)
            _ = try await source.keys(refreshingFor: nil)
            server.reply(failure.reply)

            clock.advance(by: 60)
            await #expect(throws: KeyFetchError.self) { try await source.refresh() }
            #expect(server.requestCount == 2)
            #expect(source.currentKeys()?.sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2"])
            let status = source.status()
            #expect(status.consecutiveFailures == 1)
            #expect(status.lastError?.kind == failure.kind, "\(String(describing: status.lastError))")
            // An unknown kid after the failure still gets the old set (and no second request within the cooldown).
            #expect(try await source.keys(refreshingFor: "rotated-in").sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2"])
            #expect(server.requestCount == 2)
            await source.shutdown()
        }
    }

    enum FailureCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case status500, malformedJSON, noUsableKeys, droppedConnection, hang, tenMegabytes

        var reply: ScriptedHTTPServer.Reply {
            switch self {
            case .status500: .respond(status: 500, headers: [], body: Array("oops".utf8))
            case .malformedJSON: .json(Array("{\"keys\":[{\"kty\":\"RSA\",".utf8))
            case .noUsableKeys: .json(Fixtures.bytes("test-keys/jwks-only-refused.json"))
            case .droppedConnection: .drop
            case .hang: .hang
            case .tenMegabytes: .large(bytes: 10 << 20, declareLength: false)
            }
        }

        var kind: KeyFetchError.Kind {
            switch self {
            case .status500: .httpStatus
            case .malformedJSON: .malformed
            case .noUsableKeys: .noUsableKeys
            case .droppedConnection: .transport
            case .hang: .timedOut
            case .tenMegabytes: .tooLarge
            }
        }

        var testDescription: String { rawValue }
    }

    @Test func staleIfErrorIsBoundedAndReported() async throws {
        try await Self.withServer(.json(Self.jwksA, headers: [("Cache-Control", "max-age=600")])) { server in
            let clock = ManualClock()
            var policy = Self.policy(background: true)
            policy.maximumStaleness = .seconds(3600)
            let t0 = clock.now()
            let log = CapturedLog()
            let source = try Self.source(server, clock: clock, policy: policy, log: log)
            #expect(await eventually { source.currentKeys() != nil })
            // The set is published before it is logged: wait for the entry too.
            #expect(await eventually { log.entries(at: .info).map(\.message) == ["key set loaded"] })
            server.reply(.respond(status: 503, headers: [], body: []))

            // The background refresh at 480 s fails; retries back off (10 s, 20 s, …); the old set is served.
            clock.advance(by: 480)
            #expect(await eventually { source.status().consecutiveFailures == 1 })
            #expect(source.currentKeys() != nil)
            #expect(!source.status().isStale)
            #expect(await eventually { clock.pendingDeadlines == [t0 + 490] }, "\(clock.pendingDeadlines.map { $0 - t0 })")
            let warning = try #require(log.entries(at: .warning).first)
            #expect(warning.message == "key set refresh failed; serving the last good set")
            #expect(warning.metadata["error"]?.contains("503") == true)
            #expect(warning.metadata["stale"] == "false")
            clock.advance(by: 10)
            #expect(await eventually { source.status().consecutiveFailures == 2 })
            #expect(await eventually { clock.pendingDeadlines == [t0 + 510] }, "\(clock.pendingDeadlines.map { $0 - t0 })")

            // Past max-age: stale, still served, reported.
            clock.advance(by: 130)   // t0 + 620
            #expect(await eventually { !source.status().isRefreshing })
            let stale = source.status()
            #expect(stale.isStale && stale.isUsable)
            #expect(stale.secondsStale == 20)
            #expect(stale.failureCount == stale.consecutiveFailures && stale.failureCount >= 2)
            #expect(stale.lastError?.kind == .httpStatus)
            #expect(try await source.keys(refreshingFor: nil).sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2"])
            let requestsWhileStale = server.requestCount
            #expect(requestsWhileStale >= 3)

            // Past max-age + maximum staleness: no longer served; callers get keys_unavailable.
            clock.advance(by: 3600)
            #expect(await eventually { !source.status().isRefreshing })
            #expect(source.currentKeys() == nil)
            #expect(source.withCurrentKeys { _ in true } == nil, "a stale set is not lent either")
            await #expect(throws: TokenError(.keysUnavailable, "")) { try await source.keys(refreshingFor: nil) }
            #expect(log.entries(at: .error).contains { $0.message == "key set fetch failed and no usable keys are cached" })

            // When the endpoint recovers, the next attempt restores service.
            server.reply(.json(Self.jwksB, headers: [("Cache-Control", "max-age=600")]))
            clock.advance(by: 300)
            #expect(await eventually { source.currentKeys()?.sortedKids == ["test-rsa-2", "test-rsa-3"] })
            #expect(source.withCurrentKeys { $0.sortedKids } == ["test-rsa-2", "test-rsa-3"])
            #expect(source.status().consecutiveFailures == 0)
            #expect(source.status().failureCount > stale.failureCount, "the failure counter is not reset by a success")
            #expect(source.status().secondsStale == 0)
            #expect(await eventually { log.entries(at: .info).last?.message == "key set rotated" })
            let rotation = try #require(log.entries(at: .info).last)
            #expect(rotation.message == "key set rotated")
            #expect(rotation.metadata["added"] == "test-rsa-3")
            #expect(rotation.metadata["removed"] == "test-ec-1,test-rsa-1")
            await source.shutdown()
        }
    }

    @Test func withNoKeysAFailedFetchIsNotRetriedOnEveryCall() async throws {
        try await Self.withServer(.respond(status: 500, headers: [], body: [])) { server in
            let clock = ManualClock()
            let source = try Self.source(server, clock: clock)
            await #expect(throws: TokenError(.keysUnavailable, "")) { try await source.keys(refreshingFor: nil) }
            for i in 0..<100 {
                await #expect(throws: TokenError(.keysUnavailable, "")) { try await source.keys(refreshingFor: "kid-\(i)") }
            }
            #expect(server.requestCount == 1)
            server.reply(.json(Self.jwksA))
            clock.advance(by: 10)   // the retry interval
            #expect(try await source.keys(refreshingFor: nil).sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2"])
            #expect(server.requestCount == 2)
            await source.shutdown()
        }
    }

    // MARK: Limits

    @Test(arguments: [true, false])
    func aTenMegabyteBodyIsRefusedByTheSizeLimit(declareLength: Bool) async throws {
        try await Self.withServer(.large(bytes: 10 << 20, declareLength: declareLength)) { server in
            let source = try Self.source(server, clock: ManualClock())
            let error = await #expect(throws: KeyFetchError.self) { try await source.refresh() }
            #expect(error?.kind == .tooLarge)
            #expect(error?.message.contains(String(1 << 20)) == true, "\(String(describing: error))")
            await source.shutdown()
        }
    }

    @Test func aBodyJustUnderTheLimitIsRead() async throws {
        // The limit counts bytes, not chunks: a padded set of 1 MiB - 1 bytes is accepted.
        var body = Self.jwksA
        body.removeLast()   // the trailing newline
        body += Array(repeating: UInt8(ascii: " "), count: (1 << 20) - 1 - body.count)
        try await Self.withServer(.json(body)) { server in
            let source = try Self.source(server, clock: ManualClock())
            #expect(try await source.refresh().kids.count == 3)
            await source.shutdown()
        }
    }

    @Test(arguments: [ScriptedHTTPServer.Reply.hang, .stallMidBody])
    func theTotalTimeoutIsHonoured(_ reply: ScriptedHTTPServer.Reply) async throws {
        try await Self.withServer(reply) { server in
            var limits = Self.limits
            limits.totalTimeout = .milliseconds(300)
            limits.connectTimeout = .seconds(60)
            let source = try Self.source(server, clock: ManualClock(), limits: limits)
            let started = ContinuousClock.now
            let error = await #expect(throws: KeyFetchError.self) { try await source.refresh() }
            let elapsed = ContinuousClock.now - started
            #expect(error?.kind == .timedOut)
            #expect(elapsed >= .milliseconds(280))
            // The server never finishes: without the total timeout this would not return at all. The bound is
            // loose because a loaded 2-core CI machine can take seconds to schedule the timer.
            #expect(elapsed < .seconds(60))
            await source.shutdown()
        }
    }

    @Test func aRefusedConnectionFailsAtOnce() async throws {
        let server = try await ScriptedHTTPServer.start(.json(Self.jwksA))
        await server.stop()   // nothing listens on the port any more
        let limits = KeyFetchLimits(connectTimeout: .seconds(300), totalTimeout: .seconds(600))
        let source = try Self.source(server, clock: ManualClock(), limits: limits)
        let started = ContinuousClock.now
        await #expect(throws: TokenError(.keysUnavailable, "")) { try await source.keys(refreshingFor: nil) }
        // Far below the connect timeout: a refusal is not retried until the timeout. (Usually well under a second;
        // a 2-core CI machine starting every suite at once has taken 17 s to get to it.)
        #expect(ContinuousClock.now - started < .seconds(120), "one connection attempt, no retries until the connect timeout")
        #expect(source.status().lastError?.kind == .transport)
        await source.shutdown()
    }

    @Test func redirectsAreNotFollowed() async throws {
        try await Self.withServer(.respond(status: 302, headers: [("Location", "http://example.com/keys")], body: [])) { server in
            let source = try Self.source(server, clock: ManualClock())
            let error = await #expect(throws: KeyFetchError.self) { try await source.refresh() }
            #expect(error?.kind == .httpStatus)
            #expect(error?.message.contains("http://example.com/keys") == true)
            #expect(server.requestCount == 1)
            await source.shutdown()
        }
    }

    @Test func onlyHTTPSOrLoopbackURLsAreAccepted() throws {
        for url in ["https://appleid.apple.com/auth/keys", "http://127.0.0.1:8080/keys", "http://127.1.2.3/keys",
                    "http://localhost:1/keys", "http://[::1]:9/keys", "HTTPS://example.com/jwks"] {
            #expect(throws: Never.self, "\(url)") { _ = try KeySetURL(url) }
        }
        for url in ["http://example.com/keys", "http://10.0.0.1/keys", "http://127.0.0.1.example.com/keys",
                    "http://0127.0.0.1/keys", "http://[::2]/keys", "ftp://127.0.0.1/keys", "file:///etc/keys.json",
                    "https://user:pass@example.com/keys", "appleid.apple.com/auth/keys", "http:///keys"] {
            let error = #expect(throws: KeyFetchError.self, "\(url)") { _ = try KeySetURL(url) }
            #expect(error?.kind == .insecureURL)
        }
        #expect(throws: KeyFetchError.self) { _ = try HTTPKeySource(url: "http://example.com/keys") }
    }

    // MARK: Formats, warm start, shutdown

    @Test func fetchesGooglesCertificateMapForm() async throws {
        try await Self.withServer(.json(Fixtures.bytes("test-keys/certmap-a.json"))) { server in
            let source = try Self.source(server, clock: ManualClock())
            let keys = try await source.keys(refreshingFor: nil)
            #expect(keys.sortedKids == ["test-rsa-1", "test-rsa-2"])
            for kid in ["test-rsa-1", "test-rsa-2"] {
                _ = try CompactJWS.verify(try #require(Fixtures.testTokens[kid]), keys: keys, allowed: [.rs256])
            }
            await source.shutdown()
        }
    }

    @Test func warmStartServesThePersistedSetWithoutFetching() async throws {
        let directory = Fixtures.temporaryDirectory()
        let cacheFile = directory + "/keys-cache.json"
        try await Self.withServer(.json(Self.jwksA, headers: [("Cache-Control", "max-age=600")])) { server in
            let clock = ManualClock()
            let first = try Self.source(server, clock: clock, cacheFile: cacheFile)
            _ = try await first.keys(refreshingFor: nil)
            await first.shutdown()
            #expect(server.requestCount == 1)
            let saved = try KeyCacheFile.read(path: cacheFile)
            #expect(saved.url == server.url)
            #expect(saved.body == Self.jwksA)
            #expect(saved.expiresAt - saved.fetchedAt == 600)

            // A restarted process, with the endpoint down: keys at once, from the file, no request.
            server.reply(.respond(status: 500, headers: [], body: []))
            clock.advance(by: 100)
            let second = try Self.source(server, clock: clock, cacheFile: cacheFile)
            #expect(second.currentKeys()?.sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2"])
            #expect(try await second.keys(refreshingFor: nil).kids.count == 3)
            #expect(server.requestCount == 1)
            let status = second.status()
            #expect(status.loadedFromCacheFile)
            #expect(status.fetchedAt == saved.fetchedAt)
            await second.shutdown()

            // The file is also a key file the CLI and --keys can read.
            #expect(try KeySetFile.load(cacheFile).sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2"])

            // A cache file written for another URL is ignored.
            let other = try HTTPKeySource(url: "http://127.0.0.1:1/other", cachePolicy: Self.policy(), clock: clock,
                                          cacheFilePath: cacheFile, logger: CapturedLog().logger())
            #expect(other.currentKeys() == nil)
            await other.shutdown()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func shutdownStopsBackgroundRefreshAndFetching() async throws {
        try await Self.withServer(.json(Self.jwksA, headers: [("Cache-Control", "max-age=600")])) { server in
            let clock = ManualClock()
            let source = try Self.source(server, clock: clock, policy: Self.policy(background: true))
            #expect(await eventually { source.currentKeys() != nil })
            await source.shutdown()
            #expect(clock.pendingDeadlines.isEmpty)
            clock.advance(by: 500)
            try await Task.sleep(for: .milliseconds(50))
            #expect(try await source.keys(refreshingFor: "unknown").kids.count == 3)
            await #expect(throws: KeyFetchError.self) { try await source.refresh() }
            #expect(server.requestCount == 1)
        }
    }

    @Test func droppingTheSourceEndsItsBackgroundTask() async throws {
        try await Self.withServer(.json(Self.jwksA, headers: [("Cache-Control", "max-age=600")])) { server in
            let clock = ManualClock()
            weak var weakSource: HTTPKeySource?
            do {
                let source = try Self.source(server, clock: clock, policy: Self.policy(background: true))
                weakSource = source
                #expect(await eventually { source.currentKeys() != nil })
                #expect(await eventually { clock.pendingDeadlines.count == 1 })
            }
            #expect(await eventually { weakSource == nil })
            #expect(await eventually { clock.pendingDeadlines.isEmpty })
        }
    }
}
