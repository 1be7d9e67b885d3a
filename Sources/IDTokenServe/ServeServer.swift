import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The HTTP/1.1 side of `idtoken serve` on SwiftNIO: keep-alive, bounded request size, connection count, idle and
/// request timeouts, and a graceful shutdown that answers every request already received.
package final class ServeServer: Sendable {
    package let service: ServeService
    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: NIOLockedValueBox<Channel?> = NIOLockedValueBox(nil)
    /// Open connections, for the shutdown to ask each one to finish (taken once per connection, not per request).
    private let connections = NIOLockedValueBox<[ObjectIdentifier: Channel]>([:])
    private let stopped = NIOLockedValueBox<Bool>(false)

    package init(service: ServeService, threads: Int = System.coreCount) {
        self.service = service
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
    }

    /// Binds and starts accepting; returns the bound address (its port when `settings.port` is 0).
    package func start() async throws -> SocketAddress {
        let service = self.service
        let settings = service.settings
        let metrics = service.metrics
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 4)
            .childChannelInitializer { [self] channel in
                let open = metrics.openConnections.wrappingAdd(1, ordering: .relaxed).newValue
                if open > settings.maxConnections || stopped.withLockedValue({ $0 }) {
                    metrics.openConnections.wrappingSubtract(1, ordering: .relaxed)
                    metrics.countRefusedConnection()
                    return channel.close()
                }
                let id = ObjectIdentifier(channel)
                connections.withLockedValue { $0[id] = channel }
                channel.closeFuture.whenComplete { [self] _ in
                    metrics.openConnections.wrappingSubtract(1, ordering: .relaxed)
                    connections.withLockedValue { _ = $0.removeValue(forKey: id) }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let guardHandler = RequestGuard(maxBytes: settings.maxHeaderBytes,
                                                    requestTimeout: .seconds(Int64(settings.requestTimeoutSeconds)),
                                                    idleTimeout: .seconds(Int64(settings.idleTimeoutSeconds)), metrics: metrics)
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(guardHandler)
                    try sync.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
                    try sync.addHandler(VerifyHandler(service: service, guardHandler: guardHandler))
                }
            }
        let channel = try await bootstrap.bind(host: settings.host, port: settings.port).get()
        serverChannel.withLockedValue { $0 = channel }
        service.start()
        return channel.localAddress!
    }

    /// Stops accepting, lets every connection finish the request it is answering (idle ones close at once), waits
    /// at most `shutdownGraceSeconds` for them, closes what is left and stops the threads.
    package func shutdown() async {
        if stopped.withLockedValue({ let was = $0; $0 = true; return was }) { return }
        let listener = serverChannel.withLockedValue { $0 }
        try? await listener?.close()
        for channel in connections.withLockedValue({ Array($0.values) }) {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
        let deadline = ContinuousClock.now + .seconds(service.settings.shutdownGraceSeconds)
        while ContinuousClock.now < deadline && !connections.withLockedValue({ $0.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for channel in connections.withLockedValue({ Array($0.values) }) { try? await channel.close() }
        await service.shutdown()
        try? await group.shutdownGracefully()
    }
}

/// First in each connection's pipeline: bounds the bytes a request may send before its header is decoded (431),
/// the time from a request's first byte to its complete header (408: a client trickling bytes cannot hold a
/// connection), and closes a connection idle for too long.
///
/// Both times are checked by one timer per connection (every quarter of the shorter limit, at least every 250 ms),
/// not by a timer scheduled and cancelled per request: a request only reads the clock. The timer is a one-shot task
/// that schedules the next check itself, and it is never cancelled: cancelling a scheduled task makes NIO search
/// its event loop's whole timer heap, so 10,000 connections closing (or timing out) together would cost
/// 10,000 × 10,000 steps and stall every loop. A connection that has closed just lets its last check lapse.
final class RequestGuard: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let maxBytes: Int
    private let requestTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let metrics: ServeMetrics
    /// Bytes received since the last request header was decoded.
    private var pending = 0
    private var requestStartedAt = NIODeadline.now()
    private var lastActivity = NIODeadline.now()
    private var tick = TimeAmount.seconds(1)
    /// Whether the checks go on; the pending one does not schedule another once this is false.
    private var watching = false
    private var refused = false
    /// Whether a request is being answered (idle and request limits do not apply then).
    private var busy = false

    init(maxBytes: Int, requestTimeout: TimeAmount, idleTimeout: TimeAmount, metrics: ServeMetrics) {
        self.maxBytes = maxBytes
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        tick = .nanoseconds(max(250_000_000, min(requestTimeout.nanoseconds, idleTimeout.nanoseconds) / 4))
        watching = true
        scheduleCheck(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        watching = false
    }

    private func scheduleCheck(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: tick) {
            let (handler, context) = loopBound.value
            guard handler.watching else { return }
            handler.check(context: context)
            if handler.watching { handler.scheduleCheck(context: context) }
        }
    }

    private func check(context: ChannelHandlerContext) {
        guard !refused, !busy else { return }
        let now = NIODeadline.now()
        if pending > 0 && now - requestStartedAt >= requestTimeout {
            metrics.countRequestTimeout()
            refuse(context: context, "408 Request Timeout")
        } else if pending == 0 && now - lastActivity >= idleTimeout {
            watching = false
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let buffer = unwrapInboundIn(data)
        let now = NIODeadline.now()
        lastActivity = now
        if pending == 0 && !busy { requestStartedAt = now }
        pending += buffer.readableBytes
        if pending > maxBytes {
            metrics.countHeaderTooLarge()
            refuse(context: context, "431 Request Header Fields Too Large")
            return
        }
        context.fireChannelRead(data)
    }

    /// The HTTP decoder produced a request head: its bytes are accounted for, the request time stops.
    func headReceived() {
        pending = 0
        busy = true
    }

    /// The answer to the current request was written.
    func answered() {
        busy = false
        lastActivity = .now()
    }

    private func refuse(context: ChannelHandlerContext, _ status: String) {
        guard !refused else { return }
        refused = true
        watching = false
        let text = "HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n"
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(string: text))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

/// Answers each decoded request through ``ServeService``. The pipelining handler before it hands over one
/// request at a time, so an answer that waits (a key fetch, Redis) keeps the connection's order.
final class VerifyHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let service: ServeService
    private let guardHandler: RequestGuard
    private var snapshot: ServeService.Snapshot
    private var head: HTTPRequestHead?
    private var started: NIODeadline = .now()
    private let nonceHeader: String

    init(service: ServeService, guardHandler: RequestGuard) {
        self.service = service
        self.guardHandler = guardHandler
        self.snapshot = service.currentSnapshot()
        self.nonceHeader = service.settings.nonceHeader
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            guardHandler.headReceived()
            head = requestHead
            started = .now()
        case .body:
            break   // never read
        case .end:
            guard let requestHead = head else { return }
            head = nil
            if service.generation.load(ordering: .acquiring) != snapshot.generation {
                snapshot = service.currentSnapshot()
            }
            let headers = requestHead.headers
            let cookies = headers["cookie"]
            let request = ServeRequest(target: requestHead.uri, authorization: headers.first(name: "authorization"),
                                       cookie: cookies.isEmpty ? nil : cookies.joined(separator: "; "),
                                       nonce: headers.first(name: nonceHeader))
            switch service.decide(request, snapshot: snapshot) {
            case .now(let response):
                write(response, for: requestHead, context: context)
            case .later(let work):
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.makeFutureWithTask { await work() }.whenSuccess { response in
                    let (handler, context) = loopBound.value
                    handler.write(response, for: requestHead, context: context)
                }
            }
        }
    }

    private func write(_ response: ServeResponse, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        if let slot = response.slot {
            let elapsed = NIODeadline.now().uptimeNanoseconds &- started.uptimeNanoseconds
            service.metrics.record(slot: slot, nanoseconds: elapsed)
        }
        var headers = HTTPHeaders()
        headers.reserveCapacity(response.headers.count + 3)
        for (name, value) in response.headers where IdentityHeaders.isSafe(value) {
            headers.add(name: name, value: value)
        }
        let body = response.body.utf8.count
        headers.add(name: "Content-Length", value: String(body))
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: request.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if body > 0 && request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: response.body)))), promise: nil)
        }
        guardHandler.answered()
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
