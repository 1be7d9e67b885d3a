import GRPCCore
import GRPCNIOTransportHTTP2
import IDTokenServe

/// `idtoken serve --grpc-listen HOST:PORT`: the ``ExternalAuthorizationService`` on gRPC over HTTP/2 (plaintext, as
/// Envoy's `ext_authz` cluster reaches a sidecar or a service in the mesh), beside the HTTP listener and sharing
/// its service: pipeline, keys, caches and metrics.
///
/// Bounded as the HTTP door is: a `CheckRequest` larger than a request head (`serve.maxHeaderBytes`, with room for
/// the protobuf framing and Envoy's attributes) is refused by the transport; at most 100 concurrent calls on a
/// connection; a connection idle for `serve.idleTimeoutSeconds` is closed; on shutdown, calls in flight finish
/// within `serve.shutdownGraceSeconds`.
package final class GRPCDoor: Sendable {
    private let server: GRPCServer<HTTP2ServerTransport.Posix>
    private let transport: HTTP2ServerTransport.Posix
    private let running: Task<Void, any Error>
    private let grace: Duration

    /// Starts listening; returns once the address is bound (or throws when it cannot be).
    package init(service: ServeService, host: String, port: Int) async throws {
        let settings = service.settings
        let address: GRPCNIOTransportCore.SocketAddress = host.contains(":") ? .ipv6(host: host, port: port) : .ipv4(host: host, port: port)
        transport = HTTP2ServerTransport.Posix(
            address: address,
            transportSecurity: .plaintext,
            config: .defaults { config in
                config.rpc.maxRequestPayloadSize = 2 * settings.maxHeaderBytes + 16 * 1024
                config.http2.maxConcurrentStreams = 100
                config.connection.maxIdleTime = .seconds(settings.idleTimeoutSeconds)
            })
        grace = .seconds(settings.shutdownGraceSeconds)
        let server = GRPCServer(transport: transport, services: [ExternalAuthorizationService(service: service)])
        self.server = server
        running = Task { try await server.serve() }
        do {
            _ = try await transport.listeningAddress
        } catch {
            running.cancel()
            throw error
        }
    }

    /// The bound address, `HOST:PORT` (the port chosen when 0 was asked for).
    package var address: String {
        get async throws {
            let bound = try await transport.listeningAddress
            if let ipv4 = bound.ipv4 { return "\(ipv4.host):\(ipv4.port)" }
            if let ipv6 = bound.ipv6 { return "[\(ipv6.host)]:\(ipv6.port)" }
            return "\(bound)"
        }
    }

    /// Stops accepting calls, lets those in flight finish for up to `serve.shutdownGraceSeconds`, then cancels what
    /// is left and returns.
    package func shutdown() async {
        server.beginGracefulShutdown()
        let running = self.running
        let grace = self.grace
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = try? await running.value }
            group.addTask {
                try? await Task.sleep(for: grace)
                running.cancel()
            }
            await group.next()
            group.cancelAll()
        }
        _ = try? await running.value
    }
}
