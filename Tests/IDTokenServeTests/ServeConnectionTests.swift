import Foundation
import IDTokenKit
@testable import IDTokenServe
import NIOCore
import NIOEmbedded
import Testing

/// The connection state machine on its own (``ServeConnectionPhase``'s decisions), and the connection handler in an
/// `EmbeddedChannel` whose event loop's clock the test drives: no socket, no wall clock. (An embedded channel closes
/// whole when asked to shut its write side, so the lingering that follows is checked over a real socket:
/// `ServeContractTests` and scripts/check_serve_hostile.py.)
@Suite struct ServeConnectionPhaseTests {
    static let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    static let request = TimeAmount.seconds(10)
    static let idle = TimeAmount.seconds(60)

    func timeout(_ phase: ServeConnectionPhase, after elapsed: TimeAmount, lastActivity: TimeAmount = .zero) -> ServeConnectionPhase.Timeout {
        phase.timeout(now: Self.t0 + elapsed, lastActivity: Self.t0 + lastActivity, requestTimeout: Self.request, idleTimeout: Self.idle)
    }

    @Test func timeoutsByPhase() {
        // A head: 408 from its first byte, however recent the last byte.
        #expect(timeout(.head(since: Self.t0), after: .seconds(9), lastActivity: .seconds(9)) == ServeConnectionPhase.Timeout.none)
        #expect(timeout(.head(since: Self.t0), after: .seconds(10), lastActivity: .seconds(10)) == .requestTimeout)
        // A body: closed from its request's first byte, however steadily its bytes come.
        #expect(timeout(.body(remaining: 5, since: Self.t0), after: .seconds(9), lastActivity: .seconds(9)) == ServeConnectionPhase.Timeout.none)
        #expect(timeout(.body(remaining: 5, since: Self.t0), after: .seconds(10), lastActivity: .seconds(10)) == .close)
        // Idle, a stalled reader of its answers included: closed after the idle timeout without traffic.
        #expect(timeout(.idle, after: .seconds(59)) == ServeConnectionPhase.Timeout.none)
        #expect(timeout(.idle, after: .seconds(61), lastActivity: .seconds(1)) == .close)
        // Waiting for an answer, lingering or closed: the clock decides nothing.
        for phase: ServeConnectionPhase in [.answering(remaining: 0, since: Self.t0, closing: false), .lingering, .closed] {
            #expect(timeout(phase, after: .seconds(3600)) == ServeConnectionPhase.Timeout.none, "\(phase)")
        }
    }

    @Test func shutdownByPhase() {
        #expect(ServeConnectionPhase.idle.onQuiesce == .closeNow)
        #expect(ServeConnectionPhase.head(since: Self.t0).onQuiesce == .closeNow)
        #expect(ServeConnectionPhase.body(remaining: 1, since: Self.t0).onQuiesce == .closeNow)
        #expect(ServeConnectionPhase.answering(remaining: 0, since: Self.t0, closing: false).onQuiesce == .closeAfterAnswer)
        #expect(ServeConnectionPhase.lingering.onQuiesce == .nothing)
        #expect(ServeConnectionPhase.closed.onQuiesce == .nothing)
    }

    @Test func readingByPhaseAndWritability() {
        for phase: ServeConnectionPhase in [.idle, .head(since: Self.t0), .body(remaining: 1, since: Self.t0)] {
            #expect(phase.mayRead(writable: true) && !phase.mayRead(writable: false), "\(phase): backpressure")
        }
        #expect(!ServeConnectionPhase.answering(remaining: 0, since: Self.t0, closing: false).mayRead(writable: true))
        #expect(ServeConnectionPhase.lingering.mayRead(writable: false), "lingering drops input until the client closes")
        #expect(!ServeConnectionPhase.closed.mayRead(writable: true))
    }
}

@Suite struct ServeConnectionTests {
    /// A connection of a service with a 10 s request timeout and a 20 s idle timeout, in an embedded channel.
    final class Harness {
        let loop = EmbeddedEventLoop()
        let channel: EmbeddedChannel
        let handler: ServeConnection
        let directory: String

        init() throws {
            let (service, directory) = try ServeFixture.service(serve: #"{"requestTimeoutSeconds": 10, "idleTimeoutSeconds": 20}"#)
            self.directory = directory
            handler = ServeConnection(service: service, now: loop.now)
            channel = EmbeddedChannel(handler: handler, loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        }

        deinit {
            _ = try? channel.finish()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func send(_ text: String) throws { try channel.writeInbound(ByteBuffer(string: text)) }

        /// Everything written since the last call, as text.
        func written() throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }

        func advance(_ amount: TimeAmount) { loop.advanceTime(by: amount) }
    }

    static func request(_ token: String = ServeFixture.firebaseToken(), target: String = "/verify", extra: String = "") -> String {
        "GET \(target) HTTP/1.1\r\nHost: auth\r\nAuthorization: Bearer \(token)\r\n\(extra)\r\n"
    }

    static func statuses(_ text: String) -> [String] {
        text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }.map { String($0.dropFirst(9).prefix(3)) }
    }

    @Test func aHeadInPiecesIsAnsweredWhenComplete() throws {
        let h = try Harness()
        let request = Self.request()
        let cut = request.index(request.startIndex, offsetBy: 40)
        try h.send(String(request[..<cut]))
        #expect(try h.written().isEmpty)
        guard case .head = h.handler.phase else { Issue.record("a partial head: \(h.handler.phase)"); return }
        try h.send(String(request[cut...]))
        let answer = try h.written()
        #expect(Self.statuses(answer) == ["200"])
        #expect(answer.contains("X-Auth-Subject: user-1\r\n"))
        #expect(h.handler.phase == .idle)
    }

    /// The connection lends each request's bearer token from the bytes it read (no string is made of a token the
    /// verified-token cache knows): the answer on first sight and the one from the cache carry the token's identity,
    /// its payload segment as `X-Auth-Claims` included, as the service's answer to the token as text does.
    @Test func aTokenLentFromTheBytesIsAnsweredAsItsText() async throws {
        let token = ServeFixture.firebaseToken(sub: "user-7")
        let h = try Harness()
        try h.send(Self.request(token) + Self.request(token))
        let answers = try h.written()
        #expect(Self.statuses(answers) == ["200", "200"])
        let payload = token.split(separator: ".")[1]
        let lines = answers.components(separatedBy: "\r\n")
        #expect(lines.filter { $0 == "X-Auth-Claims: \(payload)" }.count == 2, "\(answers)")
        #expect(lines.filter { $0 == "X-Auth-Subject: user-7" }.count == 2, "\(answers)")

        let (service, directory) = try ServeFixture.service(serve: #"{"requestTimeoutSeconds": 10, "idleTimeoutSeconds": 20}"#)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let response = await service.respond(to: ServeRequest(target: "/verify", bearerToken: token))
        await service.shutdown()
        #expect(response.status == 200)
        let identity = try #require(response.identity, "the service's answer to the token as text carries its identity")
        let expected = String(decoding: identity.http, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(expected.count >= 7, "\(expected)")
        for line in expected {
            #expect(lines.filter { $0 == line }.count == 2, "\(line) in\n\(answers)")
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let h = try Harness()
        let tokens = (1...3).map { ServeFixture.firebaseToken(sub: "user-\($0)") }
        try h.send(tokens.map { Self.request($0) }.joined() + Self.request("not-a-token"))
        let answers = try h.written()
        #expect(Self.statuses(answers) == ["200", "200", "200", "401"])
        let subjects = answers.components(separatedBy: "\r\n").filter { $0.hasPrefix("X-Auth-Subject: ") }
        #expect(subjects == ["X-Auth-Subject: user-1", "X-Auth-Subject: user-2", "X-Auth-Subject: user-3"])
    }

    @Test func aCycleOfAnswersIsFlushedTogetherOnceItsReadsAreHandled() throws {
        let (service, directory) = try ServeFixture.service()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loop = EmbeddedEventLoop()
        let flusher = AnswerFlusher(eventLoop: loop)
        let channels = try (0..<3).map { _ in
            let channel = EmbeddedChannel(handler: ServeConnection(service: service, flusher: flusher, now: loop.now), loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            return channel
        }
        defer { for channel in channels { _ = try? channel.finish() } }
        func written(_ channel: EmbeddedChannel) throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }
        // The cycle's reads: each connection answers its requests (two on the first) and flushes nothing yet.
        try channels[0].writeInbound(ByteBuffer(string: Self.request() + Self.request("not-a-token")))
        try channels[1].writeInbound(ByteBuffer(string: Self.request()))
        try channels[2].writeInbound(ByteBuffer(string: "GET /verify HTTP/1.1\r\nHost: auth\r\n"))   // a head in pieces
        for channel in channels { #expect(try written(channel).isEmpty) }
        #expect(flusher.runs == 0)
        // The loop's tasks after the reads: one flush task for the cycle, every connection with answers flushed once.
        loop.run()
        #expect(Self.statuses(try written(channels[0])) == ["200", "401"])
        #expect(Self.statuses(try written(channels[1])) == ["200"])
        #expect(try written(channels[2]).isEmpty)
        #expect(flusher.runs == 1 && flusher.flushed == 2)
        // The next cycle asks for its own flush.
        try channels[2].writeInbound(ByteBuffer(string: "\r\n"))
        #expect(try written(channels[2]).isEmpty)
        loop.run()
        #expect(Self.statuses(try written(channels[2])) == ["401"])
        #expect(flusher.runs == 2 && flusher.flushed == 3)
    }

    @Test func aClientThatStopsReadingStallsItsConnectionOnly() throws {
        let h = try Harness()
        h.channel.isWritable = false
        try h.send(Self.request() + Self.request())
        #expect(try h.written().isEmpty, "no answer is written while the client has not taken the earlier ones")
        // The client takes its answers: the buffered requests are answered.
        h.channel.isWritable = true
        h.channel.pipeline.fireChannelWritabilityChanged()
        #expect(Self.statuses(try h.written()) == ["200", "200"])
        // Stalled again with a request waiting: the idle timeout closes the connection.
        h.channel.isWritable = false
        try h.send(Self.request())
        h.advance(.seconds(19))
        #expect(h.channel.isActive)
        h.advance(.seconds(2))
        #expect(!h.channel.isActive)
        #expect(h.handler.phase == .closed)
    }

    @Test func aHeadSentSlowlyIs408AtTheRequestTimeout() throws {
        let h = try Harness()
        for byte in Self.request().utf8.prefix(9) {
            try h.send(String(UnicodeScalar(byte)))
            h.advance(.seconds(1))
        }
        #expect(try h.written().isEmpty)
        h.advance(.seconds(1))
        let answer = try h.written()
        #expect(Self.statuses(answer) == ["408"] && answer.contains("Connection: close\r\n"))
        #expect(!h.channel.isActive)
    }

    @Test func aBodySentSlowlyIsCutOffAtTheRequestTimeout() throws {
        let h = try Harness()
        try h.send(Self.request(extra: "Content-Length: 100\r\n") + "0123456789")
        #expect(Self.statuses(try h.written()) == ["200"], "answered when the head is complete")
        guard case .body(let remaining, _) = h.handler.phase else { Issue.record("\(h.handler.phase)"); return }
        #expect(remaining == 90)
        for _ in 0..<9 {
            try h.send("x")
            h.advance(.seconds(1))
        }
        #expect(h.channel.isActive, "within the request timeout")
        try h.send("x")
        h.advance(.seconds(1))
        #expect(!h.channel.isActive, "a byte a second does not hold the connection past the request timeout")
    }

    @Test func theBodyIsSkippedAndTheNextRequestAnswered() throws {
        let h = try Harness()
        try h.send(Self.request(extra: "Content-Length: 5\r\n") + "ab")
        try h.send("cde" + Self.request())
        #expect(Self.statuses(try h.written()) == ["200", "200"])
        #expect(h.handler.phase == .idle)
    }

    @Test func shutdownClosesBetweenAnswersInEveryPhase() throws {
        // Idle, a head begun, a body being skipped: the connection closes after what was written, without beginning
        // another answer.
        let setups: [(String, (Harness) throws -> Void)] = [
            ("idle", { _ in }),
            ("head", { try $0.send("GET /verify HT") }),
            ("body", { try $0.send(Self.request(extra: "Content-Length: 50\r\n")) }),
        ]
        for (name, setup) in setups {
            let h = try Harness()
            try setup(h)
            let before = try h.written()
            #expect(Self.statuses(before) == (name == "body" ? ["200"] : []), "\(name)")
            h.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            #expect(try h.written().isEmpty, "\(name): no answer begun after the shutdown")
            #expect(!h.channel.isActive && h.handler.phase == .closed, "\(name): \(h.handler.phase)")
        }
    }

    @Test func connectionCloseEndsTheConnectionAfterItsAnswer() throws {
        let h = try Harness()
        try h.send(Self.request(extra: "Connection: close\r\n") + Self.request())
        let answer = try h.written()
        #expect(Self.statuses(answer) == ["200"], "the pipelined request after Connection: close is not answered")
        #expect(answer.contains("Connection: close\r\n"))
        #expect(!h.channel.isActive)
    }
}
