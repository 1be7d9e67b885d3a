import Foundation
import IDTokenKit
import IDTokenServe
import TestSupport
import Testing

/// DESIGN §10's table, row by row, over real HTTP to a server on a loopback port.
@Suite(.serialized) struct ServeContractTests {
    @Test func validTokenIsAllowedWithIdentityHeaders() async throws {
        let fixture = try await ServeFixture(serve: "{\"maxCacheAgeSeconds\": 120}")
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.firebaseToken(extra: ",\"email\":\"ann@example.com\",\"email_verified\":true")
        let response = try await fixture.verify(token)
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.header("X-Auth-Subject") == "user-1")
        #expect(response.header("X-Auth-Issuer") == "https://securetoken.google.com/\(ServeFixture.project)")
        #expect(response.header("X-Auth-Provider") == "firebase")
        #expect(response.header("X-Auth-Profile") == "firebase")
        #expect(response.header("X-Auth-Audience") == ServeFixture.project)
        #expect(response.header("X-Auth-Expires") == String(Int(ServeFixture.now + 3600)))
        #expect(response.header("X-Auth-Email") == "ann@example.com")
        #expect(response.header("X-Auth-Claims") == token.split(separator: ".")[1].description)
        #expect(response.header("Cache-Control") == "private, max-age=120")
        #expect(response.header("WWW-Authenticate") == nil)
        #expect(response.header("X-Auth-Error") == nil)
    }

    /// `max-age` counts down to the token's `exp`, capped by the setting: from the lists the service makes once (up to
    /// an hour), formatted beyond them, the same for a first answer and for a token answered again from the cache.
    @Test func cacheControlCountsDownToExpiry() async throws {
        let fixture = try await ServeFixture(serve: "{\"maxCacheAgeSeconds\": 7200}")
        defer { Task { await fixture.stop() } }
        for (lifetime, expected) in [(90.0, 90), (3600, 3600), (3601, 3601), (5000, 5000), (9000, 7200)] {
            let token = ServeFixture.firebaseToken(sub: "u-\(Int(lifetime))", exp: ServeFixture.now + lifetime)
            for answer in 0..<2 {
                let response = try await fixture.verify(token)
                #expect(response.status == 200)
                #expect(response.header("Cache-Control") == "private, max-age=\(expected)", "lifetime \(lifetime), answer \(answer)")
            }
        }
    }

    @Test func unverifiedEmailIsNotPassedOn() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        let response = try await fixture.verify(ServeFixture.firebaseToken(extra: ",\"email\":\"ann@example.com\",\"email_verified\":false"))
        #expect(response.status == 200)
        #expect(response.header("X-Auth-Email") == nil)
    }

    @Test func missingTokenIsAChallengeWithoutAnErrorCode() async throws {
        let fixture = try await ServeFixture(serve: "{\"realm\": \"corp\"}")
        defer { Task { await fixture.stop() } }
        // A value with whitespace inside is no bearer credential either (a b64token has none; BearerToken, as the
        // Vapor and Hummingbird integrations read it).
        for headers in [[], ["Authorization: Basic dXNlcjpwYXNz"], ["Authorization: Bearer "], ["Authorization: Bearer not a token"]] {
            let response = try await fixture.get(headers: headers)
            #expect(response.status == 401)
            #expect(response.header("WWW-Authenticate") == "Bearer realm=\"corp\"")
            #expect(response.header("X-Auth-Error") == nil)
            #expect(response.header("Cache-Control") == "no-store")
        }
        #expect(fixture.server.service.metrics.missingTokenCount == 4)
        #expect(fixture.log.entries.filter { $0.metadata["code"] == "missing_token" }.count == 4)
    }

    @Test func invalidTokensAre401WithTheirStableCode() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        let good = ServeFixture.firebaseToken()
        let cases: [(String, TokenError.Code)] = [
            ("not-a-token", .malformed),
            (String(good.dropLast(4)) + (good.hasSuffix("AAAA") ? "BBBB" : "AAAA"), .badSignature),
            (ServeFixture.stranger.token(payload: ServeFixture.firebaseClaims()), .badSignature),
            (ServeFixture.firebaseToken(exp: ServeFixture.now - 3600), .expired),
            (ServeFixture.oidcToken(aud: "someone-else"), .wrongAudience),
            (ServeFixture.oidcToken(iss: "https://nobody.example.test"), .wrongIssuer),
            (ServeFixture.signer.token(header: "{\"alg\":\"RS256\",\"kid\":\"no-such-key\"}", payload: ServeFixture.firebaseClaims()), .unknownKey),
            (ServeFixture.signer.token(header: "{\"alg\":\"none\",\"kid\":\"serve-key-1\"}", payload: ServeFixture.firebaseClaims()), .algorithmNotAllowed),
            (ServeFixture.firebaseToken(sub: ""), .invalidClaim),
        ]
        for (token, code) in cases {
            let response = try await fixture.verify(token)
            #expect(response.status == 401, "\(code)")
            #expect(response.header("WWW-Authenticate") == "Bearer realm=\"idtoken\", error=\"invalid_token\", error_description=\"\(code.rawValue)\"")
            #expect(response.header("X-Auth-Error") == code.rawValue)
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("X-Auth-Subject") == nil)
        }
        // One log line per refusal, with its code.
        let refusals = fixture.log.entries.filter { $0.message == "refused" }
        #expect(refusals.map { $0.metadata["code"] ?? "" } == cases.map(\.1.rawValue))
        #expect(fixture.server.service.metrics.count(of: .badSignature) == 2)
    }

    @Test func policyRefusalsAre403InsufficientScope() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        for (token, code) in [(ServeFixture.firebaseToken(tenant: "t2"), TokenError.Code.tenantMismatch),
                              (ServeFixture.firebaseToken(provider: "password"), .providerNotAllowed)] {
            let response = try await fixture.verify(token)
            #expect(response.status == 403)
            #expect(response.header("WWW-Authenticate") == "Bearer realm=\"idtoken\", error=\"insufficient_scope\", error_description=\"\(code.rawValue)\"")
            #expect(response.header("X-Auth-Error") == code.rawValue)
        }
    }

    @Test func keysUnavailableIs503WithRetryAfterAndNotReady() async throws {
        let fixture = try await ServeFixture(serve: "{\"retryAfterSeconds\": 7}", unreachableProfile: true)
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.oidcToken(aud: "x", iss: "https://down.example.test")
        let response = try await fixture.verify(token)
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "7")
        #expect(response.header("X-Auth-Error") == "keys_unavailable")
        // The token was not judged, so there is no challenge for the client to act on (HTTPRefusal.unavailable).
        #expect(response.header("WWW-Authenticate") == nil)
        // The other profiles still answer; the service is alive but not ready.
        #expect(try await fixture.verify(ServeFixture.firebaseToken()).status == 200)
        #expect(try await fixture.get("/healthz").status == 200)
        let ready = try await fixture.get("/readyz")
        #expect(ready.status == 503)
        #expect(ready.body.contains("down"))
        #expect(fixture.log.entries.contains { $0.metadata["code"] == "keys_unavailable" })
    }

    @Test func readyAndMetrics() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        #expect(try await fixture.get("/readyz").status == 200)
        _ = try await fixture.verify(ServeFixture.firebaseToken())
        _ = try await fixture.verify(ServeFixture.firebaseToken(exp: ServeFixture.now - 3600))
        let metrics = try await fixture.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.body.contains("idtoken_requests_total{outcome=\"allowed\",code=\"\"} 1\n"))
        #expect(metrics.body.contains("idtoken_requests_total{outcome=\"invalid\",code=\"expired\"} 1\n"))
        #expect(metrics.body.contains("idtoken_request_duration_seconds_count 2\n"))
        #expect(metrics.body.contains("idtoken_keys_usable{profile=\"corp\"} 1\n"))
        #expect(try await fixture.get("/nothing-here").status == 404)
    }

    @Test func profileInThePathPicksTheProfile() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        #expect(try await fixture.verify(ServeFixture.oidcToken(), target: "/verify/corp").status == 200)
        let wrong = try await fixture.verify(ServeFixture.oidcToken(), target: "/verify/firebase")
        #expect(wrong.status == 401)
        // The firebase profile judges it: its audience is checked first (DESIGN §2), and is not the project.
        #expect(wrong.header("X-Auth-Error") == "wrong_audience")
        // A segment that names no profile is an original path (Envoy): the issuer routes.
        #expect(try await fixture.verify(ServeFixture.oidcToken(), target: "/verify/api/orders?id=3").status == 200)
        // The first segment alone names the profile, whatever follows it; an empty one names none.
        #expect(try await fixture.verify(ServeFixture.oidcToken(), target: "/verify/firebase/orders/7").header("X-Auth-Error") == "wrong_audience")
        #expect(try await fixture.verify(ServeFixture.oidcToken(), target: "/verify/firebase?x=1").header("X-Auth-Error") == "wrong_audience")
        #expect(try await fixture.verify(ServeFixture.oidcToken(), target: "/verify//firebase").status == 200)
        #expect(try await fixture.verify(ServeFixture.oidcToken(), target: "/verify/").status == 200)
        #expect(try await fixture.verify(ServeFixture.oidcToken(), target: "/verify/firebasex").status == 200)
    }

    @Test func requestsShapedAsEachProxySendsThem() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.firebaseToken()
        // Envoy ext_authz (HTTP service): original method, path_prefix + original path, allowed headers only.
        let envoy = try await fixture.get("/verify/api/orders/7?expand=1", method: "DELETE",
                                    headers: ["Authorization: Bearer \(token)", "Content-Length: 0", "X-Envoy-Expected-Rq-Timeout-Ms: 200"])
        #expect(envoy.status == 200)
        #expect(envoy.header("X-Auth-Subject") == "user-1")
        // Traefik forwardAuth: GET to the auth address, original request in X-Forwarded-*.
        let traefik = try await fixture.get("/verify", headers: ["Authorization: Bearer \(token)", "X-Forwarded-Method: POST",
                                                            "X-Forwarded-Proto: https", "X-Forwarded-Host: app.example.com",
                                                            "X-Forwarded-Uri: /api/orders", "X-Forwarded-For: 203.0.113.9"])
        #expect(traefik.status == 200)
        // nginx auth_request: a subrequest without a body, HTTP/1.0 unless proxy_http_version says otherwise.
        let connection = try RawConnection(port: fixture.port)
        connection.send("GET /verify HTTP/1.0\r\nAuthorization: Bearer \(token)\r\nX-Original-URI: /app\r\n\r\n")
        let nginx = try #require(await connection.readResponse())
        #expect(nginx.status == 200)
        #expect(await connection.isClosedByPeer())
    }

    /// RFC 9112 §3.2.2: a server accepts a request target in absolute form; an origin server ignores the authority.
    @Test func absoluteFormTargetsAreAnsweredAsTheirPath() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.firebaseToken()
        let absolute = try await fixture.get("http://auth.internal:8080/verify", headers: ["Authorization: Bearer \(token)"])
        #expect(absolute.status == 200)
        #expect(absolute.header("X-Auth-Subject") == "user-1")
        let named = try await fixture.get("HTTPS://auth.internal/verify/corp?x=1", headers: ["Authorization: Bearer \(token)"])
        #expect(named.status == 401 && named.header("X-Auth-Error") == "wrong_audience", "the path's profile (corp) judges the token")
        #expect(try await fixture.get("http://auth.internal/healthz").status == 200)
        #expect(try await fixture.get("http://auth.internal/readyz").status == 200)
        #expect(try await fixture.get("http://auth.internal/metrics").status == 200)
        #expect(try await fixture.get("http://auth.internal").status == 404, "no path: /")
        #expect(try await fixture.get("ftp://auth.internal/verify", headers: ["Authorization: Bearer \(token)"]).status == 404)
    }

    /// A close after an answer is a lingering close: with pipelined requests still unread, the client gets its whole
    /// answer and then the end of the stream (FIN), not a reset that could destroy the answer.
    @Test func closingWithUnreadRequestsEndsInAFinNotAReset() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.firebaseToken()
        let connection = try RawConnection(port: fixture.port)
        let unread = String(repeating: "GET /verify HTTP/1.1\r\nHost: auth\r\nAuthorization: Bearer \(token)\r\n\r\n", count: 200)
        #expect(connection.send("GET /verify HTTP/1.1\r\nHost: auth\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n" + unread))
        let answer = try #require(await connection.readResponse())
        #expect(answer.status == 200 && answer.header("Connection") == "close")
        #expect(await connection.isClosedByPeerCleanly(), "the stream ends in a FIN after the answer")
    }

    @Test func keepAliveAnswersManyRequestsOnOneConnection() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        let connection = try RawConnection(port: fixture.port)
        for i in 0..<50 {
            let token = i % 2 == 0 ? ServeFixture.firebaseToken() : "junk"
            let response = try #require(await connection.request("GET", "/verify", headers: ["Authorization: Bearer \(token)"]))
            #expect(response.status == (i % 2 == 0 ? 200 : 401))
        }
        // Three requests written at once (pipelined) are answered in order.
        let ok = "GET /verify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ServeFixture.firebaseToken())\r\n\r\n"
        connection.send(ok + "GET /verify HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + ok)
        #expect(await connection.readResponse()?.status == 200)
        #expect(await connection.readResponse()?.status == 401)
        #expect(await connection.readResponse()?.status == 200)
    }

    @Test func cookieNonceAndReplay() async throws {
        let fixture = try await ServeFixture(serve: """
            {"cookies": {"firebase": "__session"}, "nonceHeader": "X-Login-Nonce", "replayStore": "memory"}
            """)
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.firebaseToken()
        let viaCookie = try await fixture.get(headers: ["Cookie: theme=dark; __session=\(token); lang=en"])
        #expect(viaCookie.status == 200)
        #expect(viaCookie.header("Cache-Control") == "no-store")
        // The same token again: the replay cache has seen it.
        let again = try await fixture.verify(token)
        #expect(again.status == 401)
        #expect(again.header("X-Auth-Error") == "replayed")
        // OIDC profiles compare the nonce exactly.
        let withNonce = ServeFixture.oidcToken(extra: ",\"nonce\":\"n-123\"")
        #expect(try await fixture.verify(withNonce, headers: ["X-Login-Nonce: n-124"]).header("X-Auth-Error") == "nonce_mismatch")
        #expect(try await fixture.verify(withNonce, headers: ["X-Login-Nonce: n-123"]).status == 200)
    }

    @Test func verifiedTokenCacheAnswersRepeats() async throws {
        let fixture = try await ServeFixture(serve: "{\"verifiedTokenCache\": 100}")
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.firebaseToken(extra: ",\"email\":\"ann@example.com\",\"email_verified\":true")
        // The first answer renders the identity headers, the second keeps its rendering with the cached token, the
        // third writes the kept one: all three the same bytes.
        var answers: [[String]] = []
        for _ in 0..<3 {
            let response = try await fixture.verify(token)
            #expect(response.status == 200)
            answers.append(response.headers.map { "\($0.0): \($0.1)" })
        }
        #expect(answers[1] == answers[0])
        #expect(answers[2] == answers[0])
        #expect(answers[0].contains("X-Auth-Email: ann@example.com"))
        #expect(answers[0].contains("X-Auth-Claims: \(token.split(separator: ".")[1])"))
        // The same token with its profile named in the path: the same answer; Cache-Control is worked out per answer.
        let named = try await fixture.verify(token, target: "/verify/firebase")
        #expect(named.headers.map { "\($0.0): \($0.1)" } == answers[0])
        let cacheControl = try #require(answers[0].first { $0.hasPrefix("Cache-Control: ") })
        #expect(cacheControl != "Cache-Control: no-store")
        let metrics = try await fixture.get("/metrics").body
        #expect(metrics.contains("idtoken_verified_token_cache_entries{profile=\"firebase\"} 1\n"))
    }

    @Test func badServeMembersAreRefusedByName() throws {
        let names = ["firebase", "corp"]
        let cases: [(String, String)] = [
            ("{\"listen\": \"nowhere\"}", "serve.listen"),
            ("{\"maxConnections\": 0}", "serve.maxConnections"),
            ("{\"idleTimeoutSeconds\": \"60\"}", "serve.idleTimeoutSeconds"),
            ("{\"cookies\": {\"nobody\": \"__session\"}}", "serve.cookies.nobody"),
            ("{\"cookies\": {\"firebase\": \"a b\"}}", "serve.cookies.firebase"),
            ("{\"replayStore\": \"mysql://x\"}", "serve.replayStore"),
            ("{\"realm\": \"a\\\"b\"}", "serve.realm"),
            ("{\"listenn\": \"127.0.0.1:1\"}", "listenn"),
            ("[]", "\"serve\" must be a JSON object"),
        ]
        for (text, named) in cases {
            let tree = try JSONTree.parse(Array(text.utf8), maxDepth: 8)
            do {
                _ = try ServeSettings.parse(tree, profileNames: names, baseDirectory: "/etc")
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.reason.contains(named), "\(error.reason)")
            }
        }
        let tree = try JSONTree.parse(Array("{\"listen\": \"[::1]:9000\", \"keyCacheFiles\": {\"corp\": \"cache/corp.json\"}}".utf8), maxDepth: 8)
        let settings = try ServeSettings.parse(tree, profileNames: names, baseDirectory: "/etc/idtoken")
        #expect(settings.host == "::1" && settings.port == 9000)
        #expect(settings.keyCacheFiles["corp"] == "/etc/idtoken/cache/corp.json")
    }
}

/// The Redis replay store's failure modes, with Redis unreachable (nothing listens on the port), stopped and
/// started again, and the in-memory store full: a store that cannot answer is a 503, never `replayed`.
@Suite(.serialized) struct ServeRedisOutageTests {
    /// 503 with `Retry-After`, `replay_store_unavailable`, and no challenge: the token was not judged.
    static func expectUnavailable(_ response: RawResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 503, sourceLocation: sourceLocation)
        #expect(response.header("X-Auth-Error") == "replay_store_unavailable", sourceLocation: sourceLocation)
        #expect(response.header("Retry-After") != nil, sourceLocation: sourceLocation)
        #expect(response.header("WWW-Authenticate") == nil, sourceLocation: sourceLocation)
    }

    @Test func unreachableRedisIsUnavailableNotReplayed() async throws {
        let fixture = try await ServeFixture(serve: "{\"replayStore\": \"redis://127.0.0.1:9\"}")
        defer { Task { await fixture.stop() } }
        Self.expectUnavailable(try await fixture.verify(ServeFixture.firebaseToken()))
        let metrics = try await fixture.get("/metrics").body
        #expect(metrics.contains("idtoken_replay_store_failures_total 1\n"))
        #expect(metrics.contains("idtoken_requests_total{outcome=\"unavailable\",code=\"replay_store_unavailable\"} 1\n"), "\(metrics)")
    }

    @Test func unreachableRedisAllowsWhenConfiguredTo() async throws {
        let fixture = try await ServeFixture(serve: "{\"replayStore\": \"redis://127.0.0.1:9\", \"replayFailureMode\": \"allow\"}")
        defer { Task { await fixture.stop() } }
        let response = try await fixture.verify(ServeFixture.firebaseToken())
        #expect(response.status == 200)
        #expect(response.header("Cache-Control") == "no-store")
        let metrics = try await fixture.get("/metrics").body
        #expect(metrics.contains("idtoken_replay_unchecked_total 1\n"))
    }

    /// A real Redis: accepted, replayed; Redis stopped: 503, never `replayed`; Redis back on its port: accepted
    /// again without restarting the service, and the earlier token is still a replay.
    @Test func redisStoppedAndStartedAgain() async throws {
        let redis = try RedisServerProcess()
        let fixture = try await ServeFixture(serve: "{\"replayStore\": \"\(redis.url)\"}")
        defer { Task { await fixture.stop() } }
        let first = ServeFixture.firebaseToken(sub: "redis-1")
        #expect(try await fixture.verify(first).status == 200)
        let again = try await fixture.verify(first)
        #expect(again.status == 401 && again.header("X-Auth-Error") == "replayed")
        try await offPool { redis.stop() }
        Self.expectUnavailable(try await fixture.verify(ServeFixture.firebaseToken(sub: "redis-2")))
        Self.expectUnavailable(try await fixture.verify(first))
        try await offPool { try redis.start() }
        // The pool reconnects once its reconnect delay (250 ms) has passed; until then the answer stays 503.
        var statuses: [Int] = []
        for _ in 0..<50 {
            let status = try await fixture.verify(ServeFixture.firebaseToken(sub: "redis-2")).status
            statuses.append(status)
            if status != 503 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(statuses.last == 200 && statuses.dropLast().allSatisfy { $0 == 503 }, "\(statuses)")
        #expect(try await fixture.verify(ServeFixture.firebaseToken(sub: "redis-3")).status == 200)
    }

    /// The in-memory store full of live tokens: a new token is 503, a token it holds is still `replayed`.
    @Test func aFullMemoryStoreIsUnavailable() async throws {
        let fixture = try await ServeFixture(serve: "{\"replayStore\": \"memory\", \"replayCapacity\": 1}")
        defer { Task { await fixture.stop() } }
        let first = ServeFixture.firebaseToken(sub: "memory-1")
        #expect(try await fixture.verify(first).status == 200)
        Self.expectUnavailable(try await fixture.verify(ServeFixture.firebaseToken(sub: "memory-2")))
        #expect(try await fixture.verify(first).header("X-Auth-Error") == "replayed")
        let metrics = try await fixture.get("/metrics").body
        #expect(metrics.contains("idtoken_replay_store_failures_total 1\n"))
    }
}
