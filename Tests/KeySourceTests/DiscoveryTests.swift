import Foundation
import IDTokenKit
import TestSupport
import Testing

/// OpenID Connect discovery (`<issuer>/.well-known/openid-configuration`, whose `jwks_uri` names the keys) through
/// HTTPKeySource, against real loopback servers: one serves the discovery document (every odd request) and the key
/// set it names (every even one), another the key set a document moves to.
@Suite struct DiscoveryTests {
    static let kidsA = ["test-ec-1", "test-rsa-1", "test-rsa-2"]
    static let kidsB = ["test-rsa-2", "test-rsa-3"]

    static func document(issuer: String, jwksURI: String) -> ScriptedHTTPServer.Reply {
        .json(Array("{\"issuer\":\"\(issuer)\",\"authorization_endpoint\":\"\(issuer)/authorize\",\"jwks_uri\":\"\(jwksURI)\",\"id_token_signing_alg_values_supported\":[\"RS256\"]}".utf8))
    }

    static func issuer(_ server: ScriptedHTTPServer) -> String { "http://127.0.0.1:\(server.port)" }

    static func source(_ server: ScriptedHTTPServer, clock: ManualClock, log: CapturedLog = CapturedLog()) throws -> HTTPKeySource {
        try HTTPKeySource(url: Profile.discoveryURL(of: issuer(server) + "/")!, cachePolicy: HTTPKeySourceTests.policy(),
                          limits: HTTPKeySourceTests.limits, clock: clock, logger: log.logger())
    }

    @Test func theDocumentNamesTheKeySetAndARefreshFollowsItWhenItMoves() async throws {
        try await HTTPKeySourceTests.withServer(.json(HTTPKeySourceTests.jwksB)) { moved in
            try await HTTPKeySourceTests.withServer(.hang) { server in
                let moveAfter = ManagedAtomicFlag()
                server.script { n in
                    guard n % 2 == 1 else { return .json(HTTPKeySourceTests.jwksA) }
                    return moveAfter.isSet ? Self.document(issuer: Self.issuer(server), jwksURI: moved.url)
                                           : Self.document(issuer: Self.issuer(server), jwksURI: server.url)
                }
                let clock = ManualClock()
                let log = CapturedLog()
                let source = try Self.source(server, clock: clock, log: log)
                #expect(source.discoveryIssuer == Self.issuer(server))
                #expect(try await source.keys(refreshingFor: nil).sortedKids == Self.kidsA)
                #expect(server.requestCount == 2)
                moveAfter.set()
                clock.advance(by: 60)
                #expect(try await source.refresh().sortedKids == Self.kidsB)
                #expect(server.requestCount == 3 && moved.requestCount == 1)
                #expect(log.entries.contains { $0.message == "discovery document names the key set" && $0.metadata["jwks_uri"] == moved.url })
                await source.shutdown()
            }
        }
    }

    @Test func aDocumentNamingAnotherIssuerIsRefused() async throws {
        try await HTTPKeySourceTests.withServer(.hang) { server in
            server.script { n in n % 2 == 1 ? Self.document(issuer: "https://accounts.attacker.example", jwksURI: server.url) : .json(HTTPKeySourceTests.jwksA) }
            let source = try Self.source(server, clock: ManualClock())
            await #expect {
                try await source.refresh()
            } throws: { error in
                "\(error)".contains("names \"https://accounts.attacker.example\", not the issuer \"\(Self.issuer(server))\" it was fetched for")
            }
            // The key set it named was never asked for.
            #expect(server.requestCount == 1 && source.currentKeys() == nil)
            await source.shutdown()
        }
    }

    @Test func aKeySetOverPlainHTTPOffLoopbackIsRefused() async throws {
        try await HTTPKeySourceTests.withServer(.hang) { server in
            server.reply(Self.document(issuer: Self.issuer(server), jwksURI: "http://keys.example.com/jwks"))
            let source = try Self.source(server, clock: ManualClock())
            await #expect {
                try await source.refresh()
            } throws: { error in
                (error as? KeyFetchError)?.kind == .insecureURL && "\(error)".contains("names the key set http://keys.example.com/jwks")
            }
            #expect(server.requestCount == 1)
            await source.shutdown()
        }
    }

    @Test func anOutageKeepsServingTheKeysFoundBefore() async throws {
        try await HTTPKeySourceTests.withServer(.hang) { server in
            server.script { n in n % 2 == 1 ? Self.document(issuer: Self.issuer(server), jwksURI: server.url) : .json(HTTPKeySourceTests.jwksA) }
            let clock = ManualClock()
            let source = try Self.source(server, clock: clock)
            _ = try await source.keys(refreshingFor: nil)
            server.reply(.respond(status: 503, headers: [], body: []))
            clock.advance(by: 60)
            await #expect(throws: KeyFetchError.self) { try await source.refresh() }
            #expect(source.currentKeys()?.sortedKids == Self.kidsA)
            #expect(source.status().consecutiveFailures == 1)
            await source.shutdown()
        }
    }

    @Test func anOIDCProfileOfOneIssuerFindsItsKeysByDiscovery() throws {
        #expect(try Profile(options: .init(provider: .oidc, audiences: ["a"], issuers: ["https://login.example.com/tenant/"])).keysURL
                == "https://login.example.com/tenant/.well-known/openid-configuration")
        #expect(try Profile(options: .init(provider: .oidc, audiences: ["a"], issuers: ["https://a.example", "https://b.example"])).keysURL == nil)
        #expect(try Profile(options: .init(provider: .oidc, audiences: ["a"], issuers: ["https://a.example"], jwksURL: "https://a.example/k")).keysURL
                == "https://a.example/k")
        // An issuer over plain HTTP off loopback: its discovery document could be swapped on the way.
        #expect(throws: KeyFetchError.self) { _ = try HTTPKeySource(url: Profile.discoveryURL(of: "http://login.example.com")!) }
        #expect(Profile.discoveryURL(of: "accounts.example.com") == nil)
    }
}

/// A flag set once, read from the server's event loop.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
