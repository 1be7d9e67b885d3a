import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IDTokenKit
import IDTokenKitHummingbird
import IDTokenKitRedis
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing
@testable import HummingbirdSignInExample

/// The Hummingbird integration over real HTTP (HummingbirdTesting's live mode: the application runs in its
/// service group on an ephemeral loopback port), with the repository's test tokens and keys.
@Suite struct HummingbirdIntegrationTests {
    static func demoTokens() throws -> IDTokens {
        var idTokens = IDTokens()
        try SignInExample.useTestKeys(&idTokens, vectors: Vectors.directory)
        return idTokens
    }

    static func live(_ idTokens: IDTokens, router: Router<BasicIDTokenRequestContext>? = nil,
                     _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let router = router ?? Router(context: BasicIDTokenRequestContext.self)
        SignInExample.addRoutes(to: router, idTokens: idTokens)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              services: [idTokens.keyRefresh], logger: logger)
        try await app.test(.live, test)
    }

    static func valid(_ provider: String, nonce: Bool = false) throws -> VectorCase {
        let all = try Vectors.cases(provider)
        return try #require(all.first {
            $0.error == nil && ($0.nonce != nil) == nonce && ($0.nonce?.mode ?? "sha256hex") == "sha256hex"
                && $0.profileKey == all[0].profileKey && !$0.isReplayCase && $0.at == all[0].at
        })
    }

    static func bearer(_ token: String, _ more: HTTPFields = [:]) -> HTTPFields {
        var headers = more
        headers[.authorization] = "Bearer \(token)"
        return headers
    }

    static func json(_ response: TestResponse) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
    }

    /// The stable code of a refusal: Hummingbird's error body is `{"error": {"message": "<code>"}}`.
    static func code(_ response: TestResponse) -> String? {
        (json(response)?["error"] as? [String: Any])?["message"] as? String
    }

    @Test func validTokensSignIn() async throws {
        let firebase = try Self.valid("firebase")
        let apple = try Self.valid("apple"), appleNonce = try Self.valid("apple", nonce: true)
        let facebook = try Self.valid("facebook"), facebookNonce = try Self.valid("facebook", nonce: true)
        try await Self.live(try Self.demoTokens()) { client in
            let reply = try await client.execute(uri: "/sign-in/firebase", method: .post, headers: Self.bearer(firebase.token))
            #expect(reply.status == .ok)
            #expect(Self.json(reply)?["subject"] as? String == "BY1QG7VRikVaTWXSRk7zdtekwOCj")
            #expect(Self.json(reply)?["signInProvider"] as? String == "google.com")
            for (provider, plain, withNonce) in [("apple", apple, appleNonce), ("facebook", facebook, facebookNonce)] {
                let raw = try #require(withNonce.nonce?.value)
                let byHeader = try await client.execute(uri: "/sign-in/\(provider)", method: .post,
                                                        headers: Self.bearer(withNonce.token, [SignInExample.nonceHeader: raw]))
                #expect(byHeader.status == .ok, "\(provider): \(String(buffer: byHeader.body))")
                #expect(Self.json(byHeader)?["provider"] as? String == provider)
                let byPath = try await client.execute(uri: "/sign-in/\(provider)/\(raw)", method: .post, headers: Self.bearer(withNonce.token))
                #expect(byPath.status == .ok)
                let wrong = try await client.execute(uri: "/sign-in/\(provider)/\(raw)x", method: .post, headers: Self.bearer(withNonce.token))
                #expect(wrong.status == .unauthorized && Self.code(wrong) == "nonce_mismatch")
                let none = try await client.execute(uri: "/sign-in/\(provider)", method: .post, headers: Self.bearer(plain.token))
                #expect(none.status == .unauthorized && Self.code(none) == "nonce_mismatch")
                #expect(none.headers[.wwwAuthenticate] == #"Bearer error="invalid_token", error_description="nonce_mismatch""#)
            }
        }
    }

    @Test func aMissingBearerGetsAChallengeWithoutError() async throws {
        var idTokens = try Self.demoTokens()
        idTokens.settings.realm = "example"
        try await Self.live(idTokens) { client in
            let missing = try await client.execute(uri: "/sign-in/firebase", method: .post)
            #expect(missing.status == .unauthorized)
            #expect(missing.headers[.wwwAuthenticate] == #"Bearer realm="example""#)
            #expect(Self.code(missing) == "missing_token")
            let basic = try await client.execute(uri: "/sign-in/firebase", method: .post, headers: [.authorization: "Basic dXNlcjpwYXNz"])
            #expect(basic.status == .unauthorized && basic.headers[.wwwAuthenticate] == #"Bearer realm="example""#)
        }
    }

    @Test func theSchemeIsReadWithoutRegardToCase() async throws {
        let firebase = try Self.valid("firebase")
        try await Self.live(try Self.demoTokens()) { client in
            for value in ["bearer \(firebase.token)", "BEARER   \(firebase.token)  "] {
                let reply = try await client.execute(uri: "/sign-in/firebase", method: .post, headers: [.authorization: value])
                #expect(reply.status == .ok, "\(value.prefix(10))")
            }
            // Whitespace inside is no bearer credential (RFC 6750 §2.1): a missing token, not a malformed one.
            let split = try await client.execute(uri: "/sign-in/firebase", method: .post,
                                                 headers: [.authorization: "Bearer \(firebase.token.prefix(20)) \(firebase.token.dropFirst(20))"])
            #expect(split.status == .unauthorized && Self.code(split) == "missing_token")
        }
    }

    /// Every vector judged at its provider's base time through `IDTokens.verify`: the status, the challenge and
    /// the code of each refusal, a 200 for each valid token.
    @Test(arguments: Provider.allCases.map(\.rawValue))
    func everyVectorGetsItsStatusChallengeAndCode(provider: String) async throws {
        let all = try Vectors.cases(provider)
        let base = all[0].at
        let cases = all.filter { $0.at == base && !$0.isReplayCase && $0.error != "keys_unavailable" }
        let profiles = Dictionary(cases.map { ($0.verifierKey, $0) }, uniquingKeysWith: { a, _ in a })
        let names = Dictionary(uniqueKeysWithValues: profiles.keys.sorted().enumerated().map { ($1, "p\($0)") })
        var idTokens = IDTokens()
        for (key, c) in profiles {
            idTokens.use(try IDTokenVerifier(profile: c.profile, keys: try #require(try c.keySet())),
                         as: names[key]!, now: { Date(timeIntervalSince1970: base) })
        }
        let router = Router(context: BasicIDTokenRequestContext.self)
        router.post("verify/:profile") { [idTokens] request, context -> String in
            let nonce: Nonce? = request.headers[HTTPField.Name("X-Nonce")!].map {
                request.headers[HTTPField.Name("X-Nonce-Mode")!] == "exact" ? .exact($0) : .sha256Hex($0)
            }
            return try await idTokens.verify(request, context: context, profile: context.parameters.get("profile")!, nonce: nonce).subject
        }
        #expect(cases.count > 60)
        try await Self.live(idTokens, router: router) { client in
            for c in cases {
                var headers: HTTPFields = [:]
                if let nonce = c.nonce {
                    headers[HTTPField.Name("X-Nonce")!] = nonce.value
                    headers[HTTPField.Name("X-Nonce-Mode")!] = nonce.mode
                }
                let reply = try await client.execute(uri: "/verify/\(names[c.verifierKey]!)", method: .post, headers: Self.bearer(c.token, headers))
                if c.token.contains(where: \.isWhitespace) {
                    // A token with whitespace cannot travel as a bearer credential (RFC 6750 §2.1): no token.
                    #expect(reply.status == .unauthorized && Self.code(reply) != nil, "\(c.id)")
                    continue
                }
                guard let code = c.error else {
                    #expect(reply.status == .ok, "\(c.id): \(String(buffer: reply.body))")
                    continue
                }
                let (status, bearerError) = Vectors.expectedStatus(code)
                #expect(Int(reply.status.code) == status, "\(c.id)")
                #expect(Self.code(reply) == code, "\(c.id)")
                #expect(reply.headers[.wwwAuthenticate] == "Bearer error=\"\(bearerError!)\", error_description=\"\(code)\"", "\(c.id)")
            }
        }
    }

    /// A backend that accepts Firebase, Apple and Facebook tokens registers one verifier over the three profiles and
    /// guards its routes with its authenticator: each token goes to the profile its issuer names.
    @Test func severalProvidersBehindOneAuthenticator() async throws {
        let cases = try ["firebase", "apple", "facebook"].map { try Self.valid($0) }
        // The vectors of each provider are valid at their own times: the clock is set before each request.
        let clock = Mutex<Double>(0)
        let members = try cases.map { c in
            MultiProfileVerifier.Member(verifier: try IDTokenVerifier(profile: c.profile, keys: try #require(try c.keySet())))
        }
        var idTokens = IDTokens()
        idTokens.use(try MultiProfileVerifier(members), as: "any", now: { Date(timeIntervalSince1970: clock.withLock { $0 }) })
        let router = Router(context: BasicIDTokenRequestContext.self)
        router.group("me").add(middleware: idTokens.authenticator(profile: "any")).add(middleware: idTokens.guardMiddleware())
            .get { _, context -> String in
                let token = try context.requireIdentity()
                return token.provider.rawValue + " " + token.subject
            }
        try await Self.live(idTokens, router: router) { client in
            for c in cases {
                clock.withLock { $0 = c.at }
                let reply = try await client.execute(uri: "/me", method: .get, headers: Self.bearer(c.token))
                #expect(reply.status == .ok, "\(c.id): \(String(buffer: reply.body))")
                #expect(String(buffer: reply.body) == "\(c.profile.provider.rawValue) \(Vectors.subject(of: c.token) ?? "")")
            }
            // A token from an issuer none of the three accepts.
            let oidc = try Self.valid("oidc")
            clock.withLock { $0 = oidc.at }
            let foreign = try await client.execute(uri: "/me", method: .get, headers: Self.bearer(oidc.token))
            #expect(foreign.status == .unauthorized && Self.code(foreign) == "wrong_issuer")
        }
    }

    @Test func unavailableKeysAre503WithRetryAfter() async throws {
        let closed = try await Vectors.closedPort()
        var idTokens = IDTokens()
        idTokens.use(try IDTokenVerifier(profile: .firebase(projectID: "idtk-demo-7f3a2"),
                                         keys: try HTTPKeySource(url: "http://127.0.0.1:\(closed)/jwks")), as: "firebase")
        idTokens.settings.retryAfterSeconds = 7
        let token = try Self.valid("firebase").token
        try await Self.live(idTokens) { client in
            let reply = try await client.execute(uri: "/sign-in/firebase", method: .post, headers: Self.bearer(token))
            #expect(reply.status == .serviceUnavailable)
            #expect(reply.headers[.retryAfter] == "7")
            #expect(reply.headers[.wwwAuthenticate] == nil)
            #expect(Self.code(reply) == "keys_unavailable")
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .serviceUnavailable)
        }
    }

    @Test func appleNotificationsAreVerifiedAndHandledOnce() async throws {
        let cases = try Vectors.cases("apple-notification")
        let valid = try #require(cases.first { $0.id == "apple-notification/valid" })
        let unknown = try #require(cases.first { $0.id == "apple-notification/event-type-unknown" })
        var idTokens = IDTokens()
        idTokens.use(try IDTokenVerifier(profile: valid.profile, keys: try Vectors.keys(valid.keysPath!),
                                         replayCache: MemoryReplayCache(capacity: 100)),
                     as: "apple-notifications", now: { Date(timeIntervalSince1970: valid.at) })
        let handled = Mutex<[String]>([])
        let router = Router(context: BasicIDTokenRequestContext.self)
        idTokens.appleNotifications(on: router, "/apple/notifications", profile: "apple-notifications") { _, _, event in
            handled.withLock { $0.append("\(event.type.rawValue) \(event.subject) \(event.email ?? "-")") }
        }
        try await Self.live(idTokens, router: router) { client in
            let body = ByteBuffer(string: "{\"payload\": \"\(valid.token)\"}")
            #expect(try await client.execute(uri: "/apple/notifications", method: .post, body: body).status == .ok)
            // Apple delivers it again: answered 200, not handled twice.
            #expect(try await client.execute(uri: "/apple/notifications", method: .post, body: body).status == .ok)
            let refused = try await client.execute(uri: "/apple/notifications", method: .post,
                                                   body: ByteBuffer(string: "{\"payload\": \"\(unknown.token)\"}"))
            #expect(refused.status == .unauthorized && Self.code(refused) == "invalid_claim")
            let notJSON = try await client.execute(uri: "/apple/notifications", method: .post, body: ByteBuffer(string: "payload=x"))
            #expect(notJSON.status == .unauthorized && Self.code(notJSON) == "malformed")
        }
        let entries = handled.withLock { $0 }
        #expect(entries.count == 1)
        #expect(entries.first?.hasPrefix("email-disabled 001542.") == true && entries.first?.hasSuffix("@privaterelay.appleid.com") == true)
    }

    /// A notification route whose handler is `handler`, on `cache`, and a `post` of a body to it over real HTTP
    /// (AsyncHTTPClient: the live test client sends one request at a time, and a scenario has two in flight).
    static func withNotificationRoute(_ handler: NotificationHandler, cache: any ReplayCache,
                                      _ test: @escaping @Sendable (VectorCase, @escaping NotificationScenario.Post) async throws -> Void) async throws {
        let valid = try #require(try Vectors.cases("apple-notification").first { $0.id == "apple-notification/valid" })
        var idTokens = IDTokens()
        idTokens.use(try IDTokenVerifier(profile: valid.profile, keys: try Vectors.keys(valid.keysPath!), replayCache: cache),
                     as: "apple-notifications", now: { Date(timeIntervalSince1970: valid.at) })
        let router = Router(context: BasicIDTokenRequestContext.self)
        idTokens.appleNotifications(on: router, "/apple/notifications", profile: "apple-notifications") { _, _, _ in try await handler.run() }
        try await Self.live(idTokens, router: router) { client in
            let url = "http://127.0.0.1:\(try #require(client.port))/apple/notifications"
            try await test(valid) { body in
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.body = .bytes(ByteBuffer(string: body))
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 16)
                return DeliveryAnswer(status: Int(response.status.code), retryAfter: response.headers.first(name: "Retry-After"))
            }
        }
    }

    /// At least once per notification, exactly once when nothing fails (NotificationDeliveries).
    @Test(arguments: NotificationScenario.allCases)
    func notificationDeliveries(_ scenario: NotificationScenario) async throws {
        try await scenario.run(on: Self.withNotificationRoute)
    }

    @Test func aReplayCacheAcceptsEachTokenOnce() async throws {
        let valid = try Self.valid("firebase")
        var idTokens = IDTokens()
        idTokens.use(try IDTokenVerifier(profile: .firebase(projectID: "idtk-demo-7f3a2"), keys: try Vectors.keys(valid.keysPath!),
                                         replayCache: MemoryReplayCache(capacity: 1000)),
                     as: "firebase", now: { Date(timeIntervalSince1970: valid.at) })
        try await Self.live(idTokens) { client in
            #expect(try await client.execute(uri: "/sign-in/firebase", method: .post, headers: Self.bearer(valid.token)).status == .ok)
            let again = try await client.execute(uri: "/sign-in/firebase", method: .post, headers: Self.bearer(valid.token))
            #expect(again.status == .unauthorized && Self.code(again) == "replayed")
        }
    }

    @Test func aThousandConcurrentRequestsAreAllAnsweredCorrectly() async throws {
        let firebase = try Vectors.cases("firebase")
        let valid = firebase.filter { $0.error == nil && $0.at == firebase[0].at && $0.nonce == nil && $0.profileKey == firebase[0].profileKey }
        let invalid = firebase.filter { ["bad_signature", "wrong_audience", "malformed", "unknown_key"].contains($0.error ?? "")
            && $0.profileKey == firebase[0].profileKey }
        #expect(valid.count >= 5 && invalid.count >= 10)
        try await Self.live(try Self.demoTokens()) { client in
            let port = try #require(client.port)
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            do {
                let wrong = try await withThrowingTaskGroup(of: String?.self) { group in
                    for i in 0..<1000 {
                        group.addTask {
                            let c = i % 3 == 0 ? invalid[i % invalid.count] : valid[i % valid.count]
                            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/sign-in/firebase")
                            request.method = .POST
                            request.headers.add(name: "Authorization", value: "Bearer \(c.token)")
                            let response = try await http.execute(request, timeout: .seconds(30))
                            let body = try await response.body.collect(upTo: 1 << 20)
                            let json = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
                            let right = c.error == nil
                                ? response.status.code == 200 && json?["subject"] as? String == Vectors.subject(of: c.token) && Vectors.subject(of: c.token) != nil
                                : response.status.code == 401 && (json?["error"] as? [String: Any])?["message"] as? String == c.error
                            return right ? nil : "\(c.id): \(response.status.code) \(String(buffer: body))"
                        }
                    }
                    var wrong: [String] = []
                    for try await result in group { if let result { wrong.append(result) } }
                    return wrong
                }
                #expect(wrong.isEmpty, "\(wrong.prefix(5))")
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }

    @Test func anIssuersKeysAreFoundThroughItsDiscoveryDocument() async throws {
        let valid = try Self.valid("oidc")
        let jwks = try String(contentsOfFile: valid.keysPath!, encoding: .utf8)
        // A second application is the issuer's discovery document and the key set it names; the document names the
        // issuer it is served for (its own address), as HTTPKeySource requires.
        let issuerRouter = Router()
        issuerRouter.get(".well-known/openid-configuration") { request, _ in
            let address = "http://" + (request.head.authority ?? "")
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: "{\"issuer\":\"\(address)\",\"jwks_uri\":\"\(address)/jwks\"}")))
        }
        issuerRouter.get("jwks") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=600"],
                     body: .init(byteBuffer: ByteBuffer(string: jwks)))
        }
        try await Application(router: issuerRouter, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { issuer in
            let port = try #require(issuer.port)
            let keys = try HTTPKeySource(url: "http://127.0.0.1:\(port)/.well-known/openid-configuration")
            var idTokens = IDTokens()
            idTokens.use(try IDTokenVerifier(profile: valid.profile, keys: keys), as: "corp", now: { Date(timeIntervalSince1970: valid.at) })
            let router = Router(context: BasicIDTokenRequestContext.self)
            router.post("verify") { [idTokens] request, context -> String in
                try await idTokens.verify(request, context: context, profile: "corp").subject
            }
            try await Self.live(idTokens, router: router) { client in
                let reply = try await client.execute(uri: "/verify", method: .post, headers: Self.bearer(valid.token))
                #expect(reply.status == .ok)
                #expect(keys.status().fetchCount == 1 && keys.discoveryIssuer == "http://127.0.0.1:\(port)")
            }
        }
    }

    @Test func theKeyRefreshServiceRunsInTheServiceGroupAndStopsOnShutdown() async throws {
        let valid = try Self.valid("firebase")
        let jwks = try String(contentsOfFile: valid.keysPath!, encoding: .utf8)
        // A second application serves the key set, so that the verifier's keys come over HTTP.
        let keyRouter = Router()
        keyRouter.get("jwks") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=600"],
                     body: .init(byteBuffer: ByteBuffer(string: jwks)))
        }
        try await Application(router: keyRouter, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { keyServer in
            let keys = try HTTPKeySource(url: "http://127.0.0.1:\(try #require(keyServer.port))/jwks")
            var idTokens = IDTokens()
            idTokens.use(try IDTokenVerifier(profile: .firebase(projectID: "idtk-demo-7f3a2"), keys: keys),
                         as: "firebase", now: { Date(timeIntervalSince1970: valid.at) })
            try await Self.live(idTokens) { client in
                // The service warms the source alongside the server; the first request may wait for that fetch.
                let signIn = try await client.execute(uri: "/sign-in/firebase", method: .post, headers: Self.bearer(valid.token))
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(signIn.status == .ok && ready.status == .ok)
                #expect(keys.status().fetchCount == 1)
            }
            // The service group shut down gracefully: the source's refresh stopped and it fetches nothing any more.
            await #expect(throws: KeyFetchError.self) { try await keys.refresh() }
            #expect(keys.status().isRefreshing == false)
            #expect(keys.currentKeys() != nil)
        }
    }
}
