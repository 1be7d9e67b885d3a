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

        static func json(_ body: [UInt8], headers: [(String, String)] = []) -> Reply {
            .respond(status: 200, headers: [("Content-Type", "application/json")] + headers, body: body)
        }
    }

    let port: Int
    private let channel: any Channel
    private let script: NIOLockedValueBox<@Sendable (Int) -> Reply>
    private let counter: NIOLockedValueBox<Int>

    var url: String { "http://127.0.0.1:\(port)/keys" }

    /// Requests received so far.
    var requestCount: Int { counter.withLockedValue { $0 } }

    /// Every request from now on gets `reply`.
    func reply(_ reply: Reply) { script.withLockedValue { $0 = { _ in reply } } }

    /// Request number n (1-based, counting every request since the server started) gets `script(n)`.
    func script(_ script: @escaping @Sendable (Int) -> Reply) { self.script.withLockedValue { $0 = script } }

    private init(channel: any Channel, script: NIOLockedValueBox<@Sendable (Int) -> Reply>, counter: NIOLockedValueBox<Int>) {
        self.channel = channel
        self.port = channel.localAddress!.port!
        self.script = script
        self.counter = counter
    }

    static func start(_ initial: Reply = .respond(status: 404, headers: [], body: [])) async throws -> ScriptedHTTPServer {
        let script = NIOLockedValueBox<@Sendable (Int) -> Reply>({ _ in initial })
        let counter = NIOLockedValueBox(0)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(Handler(next: {
                        let n = counter.withLockedValue { $0 += 1; return $0 }
                        return script.withLockedValue { $0 }(n)
                    }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ScriptedHTTPServer(channel: channel, script: script, counter: counter)
    }

    func stop() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let next: @Sendable () -> Reply
        init(next: @escaping @Sendable () -> Reply) { self.next = next }

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
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: head))), promise: nil)
                let chunk = context.channel.allocator.buffer(repeating: UInt8(ascii: " "), count: 64 * 1024)
                var sent = 0
                while sent < bytes {
                    let n = min(chunk.readableBytes, bytes - sent)
                    context.write(wrapOutboundOut(.body(.byteBuffer(chunk.getSlice(at: 0, length: n)!))), promise: nil)
                    sent += n
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .drop:
                context.close(promise: nil)
            case .delayed(let ms, let inner):
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(ms)) {
                    let (handler, context) = loopBound.value
                    handler.perform(inner, context: context)
                }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
