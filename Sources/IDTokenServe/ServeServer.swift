import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization

/// The listeners of `idtoken serve` on SwiftNIO, the HTTP/1.1 door and the gRPC door: keep-alive, bounded request size, connection count, idle and
/// request timeouts, and a graceful shutdown that answers every request already received.
package final class ServeServer: Sendable {
    package let service: ServeService
    private let group: MultiThreadedEventLoopGroup
    /// The listeners: the HTTP door's, and the gRPC door's when it listens.
    private let serverChannels = NIOLockedValueBox<[Channel]>([])
    /// Open connections, for the shutdown to ask each one to finish (taken once per connection, not per request).
    private let connections = NIOLockedValueBox<[ObjectIdentifier: Channel]>([:])
    private let stopped = NIOLockedValueBox<Bool>(false)
    private let batchers = NIOLockedValueBox<[ObjectIdentifier: SignatureBatcher]>([:])
    /// One ``AnswerFlusher`` per event loop, for both doors' connections on it.
    private let flushers: [ObjectIdentifier: AnswerFlusher]

    /// The signature batches run so far, the tokens verified in them, the largest, and the tokens verified where
    /// they were read (light load; read on each loop's thread).
    package func signatureBatches() async -> (batches: Int, tokens: Int, largest: Int, unbatched: Int) {
        var total = (batches: 0, tokens: 0, largest: 0, unbatched: 0)
        for batcher in batchers.withLockedValue({ Array($0.values) }) {
            let counts = try? await batcher.eventLoop.submit { (batcher.batches, batcher.tokens, batcher.largest, batcher.unbatched) }.get()
            guard let counts else { continue }
            total = (total.batches + counts.0, total.tokens + counts.1, max(total.largest, counts.2), total.unbatched + counts.3)
        }
        return total
    }

    package init(service: ServeService, threads: Int = System.coreCount) {
        self.service = service
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        var flushers: [ObjectIdentifier: AnswerFlusher] = [:]
        for loop in group.makeIterator() { flushers[ObjectIdentifier(loop)] = AnswerFlusher(eventLoop: loop) }
        self.flushers = flushers
    }

    /// Binds and starts accepting; returns the bound address (its port when `settings.port` is 0).
    package func start() async throws -> SocketAddress {
        let service = self.service
        let settings = service.settings
        // One batch of signatures per event loop, when the signatures are computed several at a time (a CPU with
        // AVX-512 IFMA): with libcrypto one at a time, each is verified where its request is read. Both doors'
        // connections on a loop share its batch.
        var batchers: [ObjectIdentifier: SignatureBatcher] = [:]
        if settings.signatures != .libcrypto, settings.signatures.isAvailable {
            for loop in group.makeIterator() {
                batchers[ObjectIdentifier(loop)] = SignatureBatcher(eventLoop: loop, implementation: settings.signatures)
            }
        }
        self.batchers.withLockedValue { $0 = batchers }
        let channel = try await listen(host: settings.host, port: settings.port) { channel, batcher, flusher in
            try channel.pipeline.syncOperations.addHandler(ServeConnection(service: service, batcher: batcher, flusher: flusher))
        }
        service.start()
        return channel.localAddress!
    }

    /// Binds the gRPC door (Envoy's `ext_authz`, ``GRPCConnection``) on the same threads, service and signature
    /// batches as the HTTP door; returns the bound address. Call after ``start()``.
    package func startGRPC(host: String, port: Int) async throws -> SocketAddress {
        let service = self.service
        let channel = try await listen(host: host, port: port) { channel, batcher, flusher in
            try channel.pipeline.syncOperations.addHandlers(service.grpcConnectionHandlers(batcher: batcher, flusher: flusher))
        }
        return channel.localAddress!
    }

    /// A listener whose connections count against `maxConnections` and are asked to finish on shutdown; `handlers`
    /// sets up each connection's pipeline (with its event loop's signature batch, if any, and its flusher).
    private func listen(host: String, port: Int,
                        handlers: @escaping @Sendable (Channel, SignatureBatcher?, AnswerFlusher?) throws -> Void) async throws -> Channel {
        let settings = service.settings
        let metrics = service.metrics
        let loopBatchers = batchers.withLockedValue { $0 }
        let flushers = self.flushers
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 4)
            // Backpressure (ServeConnection, GRPCConnection): past 64 KiB of answers the client has not taken, no
            // request is read or answered until it has taken them down to 32 KiB.
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
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
                    let loop = ObjectIdentifier(channel.eventLoop)
                    try handlers(channel, loopBatchers[loop], flushers[loop])
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        serverChannels.withLockedValue { $0.append(channel) }
        return channel
    }

    /// Stops accepting, lets every connection finish the request it is answering (idle ones close at once), waits
    /// at most `shutdownGraceSeconds` for them, closes what is left and stops the threads.
    package func shutdown() async {
        if stopped.withLockedValue({ let was = $0; $0 = true; return was }) { return }
        for listener in serverChannels.withLockedValue({ $0 }) { try? await listener.close() }
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

