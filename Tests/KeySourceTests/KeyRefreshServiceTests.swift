import Foundation
import IDTokenKit
import IDTokenKitLifecycle
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import TestSupport
import Testing

/// KeyRefreshService against real HTTP servers on loopback ports: it warms the sources, leaves refreshing to
/// them, and shuts them down on graceful shutdown or cancellation.
@Suite struct KeyRefreshServiceTests {
    static let jwksA = Fixtures.bytes("test-keys/jwks-a.json")

    @Test func warmsTheSourcesAndShutsThemDownOnGracefulShutdown() async throws {
        try await HTTPKeySourceTests.withServer(.json(Self.jwksA, headers: [("Cache-Control", "max-age=600")])) { server in
            let clock = ManualClock()
            let source = try HTTPKeySourceTests.source(server, clock: clock, policy: HTTPKeySourceTests.policy(background: true))
            // Two verifiers on one source, and one on a static set: the service keeps the HTTP source, once.
            let profile = Profile.apple(clientID: "com.example.app")
            let verifiers = [try IDTokenVerifier(profile: profile, keys: source), try IDTokenVerifier(profile: profile, keys: source),
                             try IDTokenVerifier(profile: profile, keys: try JWKSet.parse(Self.jwksA))]
            let service = KeyRefreshService(verifiers: verifiers)
            #expect(service.sources.count == 1)
            #expect(await service.warm().isEmpty)
            #expect(service.isReady)

            try await testGracefulShutdown { trigger in
                let running = Task { try await service.run() }
                // The source's own background loop is what refreshes: it sleeps until the refresh point.
                #expect(await eventually { clock.pendingDeadlines.count == 1 })
                trigger.triggerGracefulShutdown()
                try await running.value
            }
            // Shut down: nothing sleeps, nothing is fetched any more, the last set is still served.
            #expect(clock.pendingDeadlines.isEmpty)
            #expect(source.status().isRefreshing == false)
            clock.advance(by: 500)
            await #expect(throws: KeyFetchError.self) { try await source.refresh() }
            #expect(server.requestCount == 1)
            #expect(source.currentKeys()?.kids.count == 3)
        }
    }

    @Test func cancellationStopsTheSourcesToo() async throws {
        try await HTTPKeySourceTests.withServer(.json(Self.jwksA, headers: [("Cache-Control", "max-age=600")])) { server in
            let clock = ManualClock()
            let source = try HTTPKeySourceTests.source(server, clock: clock, policy: HTTPKeySourceTests.policy(background: true))
            let service = KeyRefreshService(sources: [source, source])
            #expect(service.sources.count == 1)
            let running = Task { try await service.run() }
            #expect(await eventually { service.isReady && clock.pendingDeadlines.count == 1 })
            running.cancel()
            _ = try? await running.value
            #expect(clock.pendingDeadlines.isEmpty)
            await #expect(throws: KeyFetchError.self) { try await source.refresh() }
        }
    }

    @Test func aFailedFirstFetchIsReportedAndDoesNotStopTheService() async throws {
        try await HTTPKeySourceTests.withServer(.respond(status: 500, headers: [], body: [])) { server in
            let clock = ManualClock()
            let log = CapturedLog()
            let source = try HTTPKeySourceTests.source(server, clock: clock, policy: HTTPKeySourceTests.policy(background: true))
            let service = KeyRefreshService(sources: [source], logger: log.logger())
            try await testGracefulShutdown { trigger in
                let running = Task { try await service.run() }
                // The first fetch failed; the source's loop waits out its retry interval, the service keeps running.
                #expect(await eventually { log.contains(level: .warning, "requests get keys_unavailable") })
                #expect(!service.isReady)
                let error = await #expect(throws: TokenError.self) { _ = try await source.keys(refreshingFor: nil) }
                #expect(error?.code == .keysUnavailable)
                // The endpoint recovers: the source's own retry loads the keys.
                server.reply(.json(Self.jwksA, headers: [("Cache-Control", "max-age=600")]))
                #expect(await eventually { !clock.pendingDeadlines.isEmpty })
                clock.advance(by: 60)
                #expect(await eventually { service.isReady })
                trigger.triggerGracefulShutdown()
                try await running.value
            }
            #expect(clock.pendingDeadlines.isEmpty)
        }
    }
}
