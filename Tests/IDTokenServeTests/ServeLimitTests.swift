import Foundation
import IDTokenServe
import Synchronization
import Testing

/// A slow or hostile client cannot hold the service: bounded request bytes, request time, idle time and
/// connections; and a shutdown that answers what it received.
@Suite(.serialized) struct ServeLimitTests {
    @Test func oversizedHeaderIs431AndClosed() async throws {
        let fixture = try await ServeFixture(serve: "{\"maxHeaderBytes\": 4096}")
        defer { Task { await fixture.stop() } }
        let connection = try RawConnection(port: fixture.port)
        // A 1 MB header: the server answers 431 after 4 KiB and closes, it does not buffer the rest.
        connection.send("GET /verify HTTP/1.1\r\nX-Big: ")
        _ = connection.send(String(repeating: "a", count: 1 << 20))
        let response = try #require(await connection.readResponse())
        #expect(response.status == 431)
        #expect(await connection.isClosedByPeer())
        // A header just under the limit is fine.
        let ok = try await fixture.get(headers: ["X-Pad: " + String(repeating: "b", count: 3000), "Authorization: Bearer \(ServeFixture.firebaseToken())"])
        #expect(ok.status == 200)
    }

    @Test func clientTricklingBytesIsAnswered408AndClosed() async throws {
        let fixture = try await ServeFixture(serve: "{\"requestTimeoutSeconds\": 1, \"idleTimeoutSeconds\": 30}")
        defer { Task { await fixture.stop() } }
        let connection = try RawConnection(port: fixture.port, timeoutSeconds: 10)
        let started = Date()
        var closedAfter: Double?
        for byte in "GET /verify HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
            if !connection.send(String(byte)) { closedAfter = Date().timeIntervalSince(started); break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let response = await connection.readResponse()
        #expect(response?.status == 408 || closedAfter != nil)
        #expect(await connection.isClosedByPeer())
        // 40 bytes at 5 a second would take 8 s; the 1 s request timeout ends it long before (with slack for a
        // busy machine).
        #expect(Date().timeIntervalSince(started) < 7)
    }

    @Test func idleConnectionIsClosed() async throws {
        let fixture = try await ServeFixture(serve: "{\"idleTimeoutSeconds\": 1}")
        defer { Task { await fixture.stop() } }
        let connection = try RawConnection(port: fixture.port, timeoutSeconds: 5)
        #expect(await connection.request("GET", "/healthz")?.status == 200)
        let started = Date()
        #expect(await connection.isClosedByPeer())
        #expect(Date().timeIntervalSince(started) < 4)
    }

    @Test func connectionsOverTheLimitAreClosedAndTheRestServed() async throws {
        let fixture = try await ServeFixture(serve: "{\"maxConnections\": 20}")
        defer { Task { await fixture.stop() } }
        var open: [RawConnection] = []
        for _ in 0..<20 {
            let connection = try RawConnection(port: fixture.port)
            #expect(await connection.request("GET", "/healthz")?.status == 200)
            open.append(connection)
        }
        let extra = try RawConnection(port: fixture.port, timeoutSeconds: 3)
        #expect(await extra.request("GET", "/healthz") == nil)
        // The open ones still work; closing some makes room again.
        #expect(await open[5].request("GET", "/verify", headers: ["Authorization: Bearer \(ServeFixture.firebaseToken())"])?.status == 200)
        open.removeLast(5)
        try await Task.sleep(for: .milliseconds(200))
        let later = try RawConnection(port: fixture.port)
        #expect(await later.request("GET", "/healthz")?.status == 200)
        #expect(try await fixture.get("/metrics").body.contains("idtoken_connections_refused_total 1\n"))
    }

    @Test func manyConcurrentConnectionsAreAllAnswered() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.firebaseToken()
        let port = fixture.port
        let answered = Counter()
        try await offPool {
          DispatchQueue.concurrentPerform(iterations: 200) { _ in
            guard let connection = try? RawConnection(port: port) else { return }
            for _ in 0..<5 where connection.requestBlocking("GET", "/verify", headers: ["Authorization: Bearer \(token)"])?.status == 200 {
                answered.add()
            }
          }
        }
        #expect(answered.value == 1000)
    }

    @Test func shutdownUnderLoadAnswersEveryRequestItReceived() async throws {
        let fixture = try await ServeFixture()
        let token = ServeFixture.firebaseToken()
        let port = fixture.port
        let truncated = Counter()
        let answered = Counter()
        let clients = Task.detached {
            try await offPool {
            DispatchQueue.concurrentPerform(iterations: 16) { _ in
                guard let connection = try? RawConnection(port: port, timeoutSeconds: 5) else { return }
                while true {
                    guard connection.send("GET /verify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n") else { return }
                    guard let response = connection.readResponseBlocking() else {
                        // The connection ended: it must have ended between answers, never inside one.
                        return
                    }
                    if response.status != 200 { truncated.add() }
                    answered.add()
                }
            }
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let before = answered.value
        await fixture.stop()
        try await clients.value
        #expect(before > 0)
        #expect(truncated.value == 0)
        // Nothing listens any more.
        #expect(throws: (any Error).self) { _ = try RawConnection(port: port) }
    }
}

/// A counter that escaping closures can share.
final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    func add() { atomic.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { atomic.load(ordering: .relaxed) }
}
