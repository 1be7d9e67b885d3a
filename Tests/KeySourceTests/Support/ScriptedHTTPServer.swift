import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on a loopback port, run inside the test process, whose answers the test scripts
/// request by request, and which counts the requests it receives.
final class ScriptedHTTPServer: Sendable {
    /// What the server does with one request.
    enum Reply: Sendable {
        /// Status, extra headers and body (a `Content-Length` is added).
        case respond(status: Int, headers: [(String, String)], body: [UInt8])
        /// Reads the request and never answers.
        case hang
        /// Sends the head and half of a declared body, then stalls.
        case stallMidBody
        /// A 200 with `bytes` bytes of JSON-ish filler, streamed in chunks; with `declareLength`, the size is
        /// announced in `Content-Length`, otherwise the body is chunked.
        case large(bytes: Int, declareLength: Bool)
        /// Closes the connection without answering.
        case drop
        /// Waits, then does the other reply.
        indirect case delayed(milliseconds: Int64, Reply)
        /// Waits until the test calls `releaseHeld()`, then does the other reply.
        indirect case held(Reply)

        static func json(_ body: [UInt8], headers: [(String, String)] = []) -> Reply {
            .respond(status: 200, headers: [("Content-Type", "application/json")] + headers, body: body)
        }
    }

    let port: Int
    private let channel: any Channel
    private let script: NIOLockedValueBox<@Sendable (Int) -> Reply>
    private let counter: NIOLockedValueBox<Int>
    private let delivered: NIOLockedValueBox<Int>
    private let gate: Gate

    /// Replies `.held` until `releaseHeld()`: the ones waiting, and whether the gate has opened.
    final class Gate: Sendable {
        private let state = NIOLockedValueBox<(open: Bool, waiting: [@Sendable () -> Void])>((false, []))

        /// Runs `reply` now if the gate is open, otherwise when it opens.
        func pass(_ reply: @escaping @Sendable () -> Void) {
            let now = state.withLockedValue { state in
                if !state.open { state.waiting.append(reply) }
                return state.open
            }
            if now { reply() }
        }

        func open() {
            for reply in state.withLockedValue({ state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }) { reply() }
        }

        var waitingCount: Int { state.withLockedValue { $0.waiting.count } }
    }

    var url: String { "http://127.0.0.1:\(port)/keys" }

    /// Requests received so far.
    var requestCount: Int { counter.withLockedValue { $0 } }

    /// Replies `.held` so far that wait for `releaseHeld()`.
    var heldCount: Int { gate.waitingCount }

    /// Sends the `.held` replies, and from now on sends them at once.
    func releaseHeld() { gate.open() }

    /// Bytes of `.large` bodies written to the socket so far, over every connection.
    var largeBodyBytesSent: Int { delivered.withLockedValue { $0 } }

    /// Every request from now on gets `reply`.
    func reply(_ reply: Reply) { script.withLockedValue { $0 = { _ in reply } } }

    /// Request number n (1-based, counting every request since the server started) gets `script(n)`.
    func script(_ script: @escaping @Sendable (Int) -> Reply) { self.script.withLockedValue { $0 = script } }

    private init(channel: any Channel, script: NIOLockedValueBox<@Sendable (Int) -> Reply>, counter: NIOLockedValueBox<Int>,
                 delivered: NIOLockedValueBox<Int>, gate: Gate) {
        self.channel = channel
        self.port = channel.localAddress!.port!
        self.script = script
        self.counter = counter
        self.delivered = delivered
        self.gate = gate
    }

    static func start(_ initial: Reply = .respond(status: 404, headers: [], body: [])) async throws -> ScriptedHTTPServer {
        let script = NIOLockedValueBox<@Sendable (Int) -> Reply>({ _ in initial })
        let counter = NIOLockedValueBox(0)
        let delivered = NIOLockedValueBox(0)
        let gate = Gate()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(Handler(next: {
                        let n = counter.withLockedValue { $0 += 1; return $0 }
                        return script.withLockedValue { $0 }(n)
                    }, delivered: delivered, gate: gate))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ScriptedHTTPServer(channel: channel, script: script, counter: counter, delivered: delivered, gate: gate)
    }

    func stop() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let next: @Sendable () -> Reply
        let delivered: NIOLockedValueBox<Int>
        let gate: Gate
        init(next: @escaping @Sendable () -> Reply, delivered: NIOLockedValueBox<Int>, gate: Gate) {
            self.next = next
            self.delivered = delivered
            self.gate = gate
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            perform(next(), context: context)
        }

        private func perform(_ reply: Reply, context: ChannelHandlerContext) {
            switch reply {
            case .respond(let status, let headers, let body):
                var head = HTTPHeaders(headers)
                head.replaceOrAdd(name: "Content-Length", value: String(body.count))
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: head))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .hang:
                break
            case .stallMidBody:
                var head = HTTPHeaders([("Content-Type", "application/json")])
                head.add(name: "Content-Length", value: "1000")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: head))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "{\"keys\":[")))), promise: nil)
            case .large(let bytes, let declareLength):
                var head = HTTPHeaders([("Content-Type", "application/json")])
                if declareLength { head.add(name: "Content-Length", value: String(bytes)) }
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: head))), promise: nil)
                largeBodyLeft = bytes
                streamLargeBody(context: context)
            case .drop:
                context.close(promise: nil)
            case .delayed(let ms, let inner):
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(ms)) {
                    let (handler, context) = loopBound.value
                    handler.perform(inner, context: context)
                }
            case .held(let inner):
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let eventLoop = context.eventLoop
                gate.pass {
                    eventLoop.execute {
                        let (handler, context) = loopBound.value
                        handler.perform(inner, context: context)
                    }
                }
            }
        }

        /// Bytes of a `.large` body still to send. The body goes out as the socket takes it (writability), so
        /// what the server has sent is what the client read, plus the kernel's socket buffers.
        private var largeBodyLeft = 0
        private static let filler = ByteBufferAllocator().buffer(repeating: UInt8(ascii: " "), count: 64 * 1024)

        private func streamLargeBody(context: ChannelHandlerContext) {
            while largeBodyLeft > 0 && context.channel.isWritable {
                let n = min(Self.filler.readableBytes, largeBodyLeft)
                largeBodyLeft -= n
                let delivered = self.delivered
                let promise = context.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenSuccess { delivered.withLockedValue { $0 += n } }
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(Self.filler.getSlice(at: 0, length: n)!))), promise: promise)
                if largeBodyLeft == 0 { context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil) }
            }
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if largeBodyLeft > 0 { streamLargeBody(context: context) }
            context.fireChannelWritabilityChanged()
        }

        func channelInactive(context: ChannelHandlerContext) {
            largeBodyLeft = 0
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
