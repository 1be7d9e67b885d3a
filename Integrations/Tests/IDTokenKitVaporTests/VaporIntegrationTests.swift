import AsyncHTTPClient
import Foundation
import IDTokenKit
import IDTokenKitRedis
import IDTokenKitVapor
import NIOCore
import NIOPosix
import Synchronization
import Testing
import Vapor
@testable import VaporSignInExample

/// The Vapor integration over real HTTP: the example application and vector-driven routes, served on an
/// ephemeral loopback port, with the repository's test tokens and keys.
@Suite struct VaporIntegrationTests {
    static func demo(_ app: Application) throws {
        try SignInExample.useTestKeys(app, vectors: Vectors.directory)
        SignInExample.routes(app)
    }

    static func valid(_ provider: String, nonce: Bool = false) throws -> VectorCase {
        let all = try Vectors.cases(provider)
        return try #require(all.first {
            $0.error == nil && ($0.nonce != nil) == nonce && ($0.nonce?.mode ?? "sha256hex") == "sha256hex"
                && $0.profileKey == all[0].profileKey && !$0.isReplayCase && $0.at == all[0].at
        })
    }

    @Test func validTokensSignIn() async throws {
        try await RunningApp.with(Self.demo) { server in
            let firebase = try Self.valid("firebase")
            let reply = try await server.send("/sign-in/firebase", token: firebase.token)
            #expect(reply.status == 200)
            #expect(reply.json?["provider"] as? String == "firebase")
            #expect(reply.json?["subject"] as? String == "BY1QG7VRikVaTWXSRk7zdtekwOCj")
            #expect(reply.json?["signInProvider"] as? String == "google.com")

            for provider in ["apple", "facebook"] {
                let plain = try Self.valid(provider)
                let withNonce = try Self.valid(provider, nonce: true)
                let raw = try #require(withNonce.nonce?.value)
                // The nonce from a header, or from the path; a route that expects one refuses a request without it.
                let byHeader = try await server.send("/sign-in/\(provider)", token: withNonce.token, headers: [(SignInExample.nonceHeader, raw)])
                #expect(byHeader.status == 200, "\(provider): \(byHeader.body)")
                #expect(byHeader.json?["provider"] as? String == provider)
                let byPath = try await server.send("/sign-in/\(provider)/\(raw)", token: withNonce.token)
                #expect(byPath.status == 200)
                let wrong = try await server.send("/sign-in/\(provider)/\(raw)x", token: withNonce.token)
                #expect(wrong.status == 401 && wrong.json?["reason"] as? String == "nonce_mismatch")
                let none = try await server.send("/sign-in/\(provider)", token: plain.token)
                #expect(none.status == 401 && none.json?["reason"] as? String == "nonce_mismatch")
                #expect(none.headers.first(name: "WWW-Authenticate") == #"Bearer error="invalid_token", error_description="nonce_mismatch""#)
            }
        }
    }

    @Test func aMissingOrMalformedBearerGetsAChallengeWithoutError() async throws {
        try await RunningApp.with({ app in
            try Self.demo(app)
            app.idTokens.settings.realm = "example"
        }) { server in
            let missing = try await server.send("/sign-in/firebase")
            #expect(missing.status == 401)
            #expect(missing.headers.first(name: "WWW-Authenticate") == #"Bearer realm="example""#)
            #expect(missing.json?["reason"] as? String == "missing_token")
            let basic = try await server.send("/sign-in/firebase", headers: [("Authorization", "Basic dXNlcjpwYXNz")])
            #expect(basic.status == 401 && basic.headers.first(name: "WWW-Authenticate") == #"Bearer realm="example""#)
        }
    }

    /// Every vector judged at its provider's base time, through `req.idToken.verify(profile:nonce:)`: the status,
    /// the challenge and the code of each refusal, the subject of each valid token.
    @Test(arguments: Provider.allCases.map(\.rawValue))
    func everyVectorGetsItsStatusChallengeAndCode(provider: String) async throws {
        let all = try Vectors.cases(provider)
        let base = all[0].at
        let cases = all.filter { $0.at == base && !$0.isReplayCase && $0.error != "keys_unavailable" }
        let profiles = Dictionary(cases.map { ($0.verifierKey, $0) }, uniquingKeysWith: { a, _ in a })
        let names = Dictionary(uniqueKeysWithValues: profiles.keys.sorted().enumerated().map { ($1, "p\($0)") })
        try await RunningApp.with({ app in
            for (key, c) in profiles {
                app.idTokens.use(try IDTokenVerifier(profile: c.profile, keys: try #require(try c.keySet())),
                                 as: names[key]!, now: { Date(timeIntervalSince1970: base) })
            }
            app.post("verify", ":profile") { req async throws -> String in
                let nonce: Nonce? = req.headers.first(name: "X-Nonce").map {
                    req.headers.first(name: "X-Nonce-Mode") == "exact" ? .exact($0) : .sha256Hex($0)
                }
                return try await req.idToken.verify(profile: req.parameters.get("profile")!, nonce: nonce).subject
            }
        }) { server in
            #expect(cases.count > 60)
            for c in cases {
                var headers: [(String, String)] = []
                if let nonce = c.nonce { headers = [("X-Nonce", nonce.value), ("X-Nonce-Mode", nonce.mode)] }
                let reply = try await server.send("/verify/\(names[c.verifierKey]!)", token: c.token, headers: headers)
                if c.token.contains(where: \.isWhitespace) {
                    // A token with whitespace cannot travel as a bearer credential (RFC 6750 §2.1): no token.
                    #expect(reply.status == 401 && reply.json?["reason"] as? String == "missing_token", "\(c.id)")
                    continue
                }
                guard let code = c.error else {
                    #expect(reply.status == 200, "\(c.id): \(reply.body)")
                    continue
                }
                let (status, bearerError) = Vectors.expectedStatus(code)
                #expect(reply.status == status, "\(c.id)")
                #expect(reply.json?["reason"] as? String == code, "\(c.id)")
                #expect(reply.headers.first(name: "WWW-Authenticate")
                    == "Bearer error=\"\(bearerError!)\", error_description=\"\(code)\"", "\(c.id)")
            }
        }
    }

    /// A backend that accepts Firebase, Apple and Facebook tokens registers one verifier over the three profiles
    /// and guards its routes with it: each token goes to the profile its issuer names.
    @Test func severalProvidersBehindOneAuthenticator() async throws {
        let cases = try ["firebase", "apple", "facebook"].map { try Self.valid($0) }
        // The vectors of each provider are valid at their own times: the clock is set before each request.
        let clock = Mutex<Double>(0)
        try await RunningApp.with({ app in
            let members = try cases.map { c in
                MultiProfileVerifier.Member(verifier: try IDTokenVerifier(profile: c.profile, keys: try #require(try c.keySet())))
            }
            app.idTokens.use(try MultiProfileVerifier(members), as: "any", now: { Date(timeIntervalSince1970: clock.withLock { $0 }) })
            app.grouped(app.idTokens.authenticator(profile: "any"), IDTokenGuardMiddleware()).get("me") { req -> String in
                let token = try req.auth.require(VerifiedToken.self)
                return token.provider.rawValue + " " + token.subject
            }
        }) { server in
            for c in cases {
                clock.withLock { $0 = c.at }
                let reply = try await server.send("/me", method: .GET, token: c.token)
                #expect(reply.status == 200, "\(c.id): \(reply.body)")
                #expect(reply.body == "\(c.profile.provider.rawValue) \(Vectors.subject(of: c.token) ?? "")")
            }
            // A token from an issuer none of the three accepts.
            let oidc = try Self.valid("oidc")
            clock.withLock { $0 = oidc.at }
            let foreign = try await server.send("/me", method: .GET, token: oidc.token)
            #expect(foreign.status == 401 && foreign.json?["reason"] as? String == "wrong_issuer")
        }
    }

    /// swift-crypto's `SHA256`, which Vapor re-exports, stays usable in an app that imports IDTokenKit too.
    @Test func cryptoNamesStayUnambiguousBesideIDTokenKit() {
        #expect(Array(SHA256.hash(data: [1])).count == 32)
    }

    @Test func unavailableKeysAre503WithRetryAfter() async throws {
        // A loopback port with nothing listening: the first fetch is refused at once, and there is no cached set.
        let closed = try await Vectors.closedPort()
        try await RunningApp.with({ app in
            let keys = try HTTPKeySource(url: "http://127.0.0.1:\(closed)/jwks")
            app.idTokens.use(try IDTokenVerifier(profile: .firebase(projectID: "idtk-demo-7f3a2"), keys: keys), as: "firebase")
            app.idTokens.settings.retryAfterSeconds = 7
            SignInExample.routes(app)
        }) { server in
            let reply = try await server.send("/sign-in/firebase", token: try Self.valid("firebase").token)
            #expect(reply.status == 503)
            #expect(reply.headers.first(name: "Retry-After") == "7")
            #expect(reply.headers.first(name: "WWW-Authenticate") == nil)
            #expect(reply.json?["reason"] as? String == "keys_unavailable")
            #expect(try await server.send("/readyz", method: .GET).status == 503)
        }
    }

    @Test func aReplayCacheAcceptsEachTokenOnce() async throws {
        let valid = try Self.valid("firebase")
        try await RunningApp.with({ app in
            app.idTokens.use(try IDTokenVerifier(profile: .firebase(projectID: "idtk-demo-7f3a2"),
                                                 keys: try Vectors.keys(valid.keysPath!), replayCache: MemoryReplayCache(capacity: 1000)),
                             as: "firebase", now: { Date(timeIntervalSince1970: valid.at) })
            SignInExample.routes(app)
        }) { server in
            #expect(try await server.send("/sign-in/firebase", token: valid.token).status == 200)
            let again = try await server.send("/sign-in/firebase", token: valid.token)
            #expect(again.status == 401 && again.json?["reason"] as? String == "replayed")
        }
    }

    @Test func appleNotificationsAreVerifiedAndHandledOnce() async throws {
        let cases = try Vectors.cases("apple-notification")
        let valid = try #require(cases.first { $0.id == "apple-notification/valid" })
        let unknown = try #require(cases.first { $0.id == "apple-notification/event-type-unknown" })
        let handled = Handled()
        try await RunningApp.with({ app in
            app.idTokens.use(try IDTokenVerifier(profile: valid.profile, keys: try Vectors.keys(valid.keysPath!),
                                                 replayCache: MemoryReplayCache(capacity: 100)),
                             as: "apple-notifications", now: { Date(timeIntervalSince1970: valid.at) })
            app.appleNotifications("apple", "notifications", profile: "apple-notifications") { _, event in
                handled.append("\(event.type.rawValue) \(event.subject) \(event.email ?? "-")")
            }
        }) { server in
            let body = "{\"payload\": \"\(valid.token)\"}"
            #expect(try await server.send("/apple/notifications", body: body).status == 200)
            // Apple delivers it again: answered 200, not handled twice.
            #expect(try await server.send("/apple/notifications", body: body).status == 200)
            let refused = try await server.send("/apple/notifications", body: "{\"payload\": \"\(unknown.token)\"}")
            #expect(refused.status == 401 && refused.json?["reason"] as? String == "invalid_claim")
            let notJSON = try await server.send("/apple/notifications", body: "payload=\(valid.token)")
            #expect(notJSON.status == 401 && notJSON.json?["reason"] as? String == "malformed")
            let entries = handled.entries
            #expect(entries.count == 1)
            #expect(entries.first?.hasPrefix("email-disabled 001542.") == true && entries.first?.hasSuffix("@privaterelay.appleid.com") == true)
        }
    }

    /// A notification route whose handler is `handler`, on `cache`, and a `post` of a body to it over real HTTP.
    static func withNotificationRoute(_ handler: NotificationHandler, cache: any ReplayCache,
                                      _ test: @escaping @Sendable (VectorCase, @escaping NotificationScenario.Post) async throws -> Void) async throws {
        let valid = try #require(try Vectors.cases("apple-notification").first { $0.id == "apple-notification/valid" })
        try await RunningApp.with({ app in
            app.idTokens.use(try IDTokenVerifier(profile: valid.profile, keys: try Vectors.keys(valid.keysPath!), replayCache: cache),
                             as: "apple-notifications", now: { Date(timeIntervalSince1970: valid.at) })
            app.appleNotifications("apple", "notifications", profile: "apple-notifications") { _, _ in try await handler.run() }
        }) { server in
            try await test(valid) { body in
                let reply = try await server.send("/apple/notifications", body: body)
                return DeliveryAnswer(status: reply.status, retryAfter: reply.headers.first(name: .retryAfter))
            }
        }
    }

    /// At least once per notification, exactly once when nothing fails (NotificationDeliveries).
    @Test(arguments: NotificationScenario.allCases)
    func notificationDeliveries(_ scenario: NotificationScenario) async throws {
        try await scenario.run(on: Self.withNotificationRoute)
    }

    @Test func aThousandConcurrentRequestsAreAllAnsweredCorrectly() async throws {
        let firebase = try Vectors.cases("firebase")
        let valid = firebase.filter { $0.error == nil && $0.at == firebase[0].at && $0.nonce == nil && $0.profileKey == firebase[0].profileKey }
        let invalid = firebase.filter { ["bad_signature", "wrong_audience", "malformed", "unknown_key"].contains($0.error ?? "")
            && $0.profileKey == firebase[0].profileKey }
        #expect(valid.count >= 5 && invalid.count >= 10)
        try await RunningApp.with(Self.demo) { server in
            let wrong = try await withThrowingTaskGroup(of: String?.self) { group in
                for i in 0..<1000 {
                    group.addTask {
                        let c = i % 3 == 0 ? invalid[i % invalid.count] : valid[i % valid.count]
                        let reply = try await server.send("/sign-in/firebase", token: c.token)
                        let subject = c.error == nil ? Vectors.subject(of: c.token) : nil
                        let right = c.error == nil ? reply.status == 200 && reply.json?["subject"] as? String == subject
                            : reply.status == 401 && reply.json?["reason"] as? String == c.error
                        return right ? nil : "\(c.id): \(reply.status) \(reply.body)"
                    }
                }
                var wrong: [String] = []
                for try await result in group { if let result { wrong.append(result) } }
                return wrong
            }
            #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        }
    }

    @Test func anIssuersKeysAreFoundThroughItsDiscoveryDocument() async throws {
        let valid = try Self.valid("oidc")
        let jwks = try String(contentsOfFile: valid.keysPath!, encoding: .utf8)
        let asked = Handled()
        // A second application is the issuer's discovery document and the key set it names; the document names the
        // issuer it is served for (its own address), as HTTPKeySource requires.
        try await RunningApp.with({ issuer in
            issuer.get(".well-known", "openid-configuration") { req in
                asked.append("document")
                let address = "http://" + (req.headers.first(name: .host) ?? "")
                return Response(status: .ok, headers: ["Content-Type": "application/json"],
                                body: .init(string: "{\"issuer\":\"\(address)\",\"jwks_uri\":\"\(address)/jwks\"}"))
            }
            issuer.get("jwks") { _ in
                asked.append("jwks")
                return Response(status: .ok, headers: ["Content-Type": "application/json", "Cache-Control": "max-age=600"], body: .init(string: jwks))
            }
        }) { issuer in
            let keys = try HTTPKeySource(url: "http://127.0.0.1:\(issuer.port)/.well-known/openid-configuration")
            try await RunningApp.with({ app in
                app.idTokens.use(try IDTokenVerifier(profile: valid.profile, keys: keys), as: "corp", now: { Date(timeIntervalSince1970: valid.at) })
                app.post("verify") { req async throws -> String in try await req.idToken.verify(profile: "corp").subject }
            }) { server in
                let reply = try await server.send("/verify", token: valid.token)
                #expect(reply.status == 200, "\(reply.body)")
                #expect(asked.entries.prefix(2) == ["document", "jwks"], "\(asked.entries)")
            }
        }
    }

    @Test func theKeyRefreshServiceStartsWithTheAppAndStopsOnShutdown() async throws {
        let valid = try Self.valid("firebase")
        let jwks = try String(contentsOfFile: valid.keysPath!, encoding: .utf8)
        // A second application serves the key set, so that the verifier's keys come over HTTP.
        try await RunningApp.with({ keyServer in
            keyServer.get("jwks") { _ in Response(status: .ok, headers: ["Content-Type": "application/json", "Cache-Control": "max-age=600"], body: .init(string: jwks)) }
        }) { keyServer in
            let keys = try HTTPKeySource(url: "http://127.0.0.1:\(keyServer.port)/jwks")
            try await RunningApp.with({ app in
                app.idTokens.use(try IDTokenVerifier(profile: .firebase(projectID: "idtk-demo-7f3a2"), keys: keys),
                                 as: "firebase", now: { Date(timeIntervalSince1970: valid.at) })
                SignInExample.routes(app)
            }) { server in
                // Booting warmed the source: the keys were fetched before the first request.
                #expect(keys.currentKeys() != nil)
                let ready = try await server.send("/readyz", method: .GET)
                let signIn = try await server.send("/sign-in/firebase", token: valid.token)
                #expect(ready.status == 200 && signIn.status == 200)
                #expect(keys.status().fetchCount == 1)
            }
            // The application shut down: the source's refresh stopped, and it fetches nothing any more.
            await #expect(throws: KeyFetchError.self) { try await keys.refresh() }
            #expect(keys.status().isRefreshing == false)
        }
    }
}

/// What a notification route's handler was given.
final class Handled: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ entry: String) { storage.withLock { $0.append(entry) } }
    var entries: [String] { storage.withLock { $0 } }
}
