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
        let results = try await withThrowingTaskGroup(of: [String].self) { group in
            for c in 0..<24 {
                group.addTask {
                    try await offPool {
                        let connection = try RawConnection(port: port)
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
                }
            }
            var all: [String] = []
            for try await problems in group { all += problems }
            return all
        }
        #expect(results.isEmpty, "\(results.prefix(5))")
        let counts = await fixture.server.signatureBatches()
        #expect(counts.tokens + counts.unbatched == 1 + 24 * 6)
        // Under this load requests from different connections met in batches (a probe every sixteenth token finds it).
        #expect(counts.largest >= 2 && counts.batches < counts.tokens, "\(counts)")
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
