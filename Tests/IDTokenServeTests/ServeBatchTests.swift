import Foundation
import IDTokenKit
@testable import IDTokenServe
import TestSupport
import Testing

/// `idtoken serve` verifying the signatures of the requests one event-loop cycle delivers together
/// (``SignatureBatcher``), with the kernel's lanes computed in portable C so that the batch path runs on any CPU:
/// every answer is the one the request's own token deserves, batches form across connections under load, and a lone
/// request is verified where it is read.
@Suite struct ServeBatchTests {
    @Test func concurrentConnectionsAreAnsweredFromSharedBatches() async throws {
        let fixture = try await ServeFixture(signatures: .portable)
        defer { Task { await fixture.stop() } }
        let port = fixture.port

        // A lone request first: verified where it is read, no batch.
        let lone = try await fixture.verify(ServeFixture.firebaseToken(sub: "lone"))
        #expect(lone.status == 200 && lone.header("X-Auth-Subject") == "lone")
        let afterLone = await fixture.server.signatureBatches()
        #expect(afterLone.batches == 0 && afterLone.unbatched == 1)

        // 24 connections, each with six requests on keep-alive: distinct valid tokens, one signed by another key
        // under the same kid (bad_signature), one whose payload was altered after signing.
        let results = try await Self.onConnections(24, port: port) { c, connection in
            var problems: [String] = []
            for r in 0..<6 {
                let sub = "user-\(c)-\(r)"
                var token = ServeFixture.firebaseToken(sub: sub)
                var expected = (200, Optional<String>.none)
                if r == 2 {
                    token = ServeFixture.stranger.token(payload: ServeFixture.firebaseClaims(sub: sub))
                    expected = (401, "bad_signature")
                } else if r == 4 {
                    let parts = token.split(separator: ".")
                    let other = Base64URL.encode(Array(ServeFixture.firebaseClaims(sub: "someone-else").utf8))
                    token = "\(parts[0]).\(other).\(parts[2])"
                    expected = (401, "bad_signature")
                }
                guard let response = connection.requestBlocking(headers: ["Authorization: Bearer \(token)"]) else {
                    problems.append("\(sub): no response")
                    break
                }
                if response.status != expected.0 || response.header("X-Auth-Error") != expected.1
                    || (expected.0 == 200 && response.header("X-Auth-Subject") != sub) {
                    problems.append("\(sub): \(response.status) \(response.header("X-Auth-Error") ?? "") \(response.header("X-Auth-Subject") ?? "")")
                }
            }
            return problems
        }
        #expect(results.isEmpty, "\(results.prefix(5))")
        let counts = await fixture.server.signatureBatches()
        #expect(counts.tokens + counts.unbatched == 1 + 24 * 6)
        // Under this load requests from different connections met in batches (a probe every sixteenth token finds it).
        #expect(counts.largest >= 2 && counts.batches < counts.tokens, "\(counts)")
    }

    /// With `serve.appCheck`, both of a request's tokens are batched: the App Check token's signature with those of
    /// its cycle, then the ID token's with those of a later one. A request refused for its App Check token never
    /// gets its ID token judged.
    @Test func appCheckTokensAndTheIDTokensAfterThemAreBatched() async throws {
        let fixture = try await ServeFixture(serve: ServeAppCheckTests.serve, appCheck: true, signatures: .portable)
        defer { Task { await fixture.stop() } }
        let port = fixture.port
        /// `token` with its payload swapped for `other`'s: the signature no longer matches.
        @Sendable func altered(_ token: String, payloadOf other: String) -> String {
            let parts = token.split(separator: "."), otherParts = other.split(separator: ".")
            return "\(parts[0]).\(otherParts[1]).\(parts[2])"
        }
        let connections = 16, requests = 5
        let results = try await Self.onConnections(connections, port: port) { c, connection in
            var problems: [String] = []
            for r in 0..<requests {
                let sub = "user-\(c)-\(r)"
                var idToken = ServeFixture.firebaseToken(sub: sub)
                // Distinct App Check tokens: the same one again would be answered by its verified-token cache.
                var appCheck = ServeFixture.appCheckToken(exp: ServeFixture.now + 3600 + Double(c * requests + r))
                var expected: (status: Int, code: String?, token: String?) = (200, nil, nil)
                if r == 1 {
                    appCheck = altered(appCheck, payloadOf: ServeFixture.appCheckToken(exp: ServeFixture.now + 1800))
                    expected = (401, "bad_signature", "app-check")
                } else if r == 3 {
                    idToken = altered(idToken, payloadOf: ServeFixture.firebaseToken(sub: "someone-else"))
                    expected = (401, "bad_signature", "id-token")
                }
                guard let response = connection.requestBlocking(headers: ["Authorization: Bearer \(idToken)",
                                                                          "X-Firebase-AppCheck: \(appCheck)"]) else {
                    problems.append("\(sub): no response")
                    break
                }
                let subject = response.header("X-Auth-Subject"), app = response.header("X-Auth-App-Id")
                if response.status != expected.status || response.header("X-Auth-Error") != expected.code
                    || response.header("X-Auth-Error-Token") != expected.token
                    || (expected.status == 200 && (subject != sub || app != ServeFixture.appCheckAppID)) {
                    problems.append("\(sub): \(response.status) \(response.header("X-Auth-Error") ?? "") \(subject ?? "")")
                }
            }
            return problems
        }
        #expect(results.isEmpty, "\(results.prefix(5))")
        // Every App Check token's signature, and the ID token's of each request whose App Check token passed, went
        // through the batcher: in a batch, or verified where it was read.
        let counts = await fixture.server.signatureBatches()
        let appCheckRefused = connections
        #expect(counts.tokens + counts.unbatched == connections * requests * 2 - appCheckRefused, "\(counts)")
        #expect(counts.largest >= 2 && counts.batches < counts.tokens, "\(counts)")
    }

    /// Runs `requests` on `count` keep-alive connections at once, each on a thread of its own (a test blocking in
    /// `recv` must not hold the cooperative pool); returns every problem they report.
    static func onConnections(_ count: Int, port: Int,
                              _ requests: @escaping @Sendable (Int, RawConnection) -> [String]) async throws -> [String] {
        try await withThrowingTaskGroup(of: [String].self) { group in
            for c in 0..<count {
                group.addTask { try await offPool { requests(c, try RawConnection(port: port)) } }
            }
            var all: [String] = []
            for try await problems in group { all += problems }
            return all
        }
    }

    @Test func withoutTheKernelNothingIsBatched() async throws {
        let fixture = try await ServeFixture(signatures: .libcrypto)
        defer { Task { await fixture.stop() } }
        let response = try await fixture.verify(ServeFixture.firebaseToken(sub: "plain"))
        #expect(response.status == 200 && response.header("X-Auth-Subject") == "plain")
        let counts = await fixture.server.signatureBatches()
        #expect(counts.batches == 0 && counts.tokens == 0 && counts.unbatched == 0)
    }
}
