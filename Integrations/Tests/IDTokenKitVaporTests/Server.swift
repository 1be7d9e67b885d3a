import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import Vapor

/// An application booted (its lifecycle handlers run) and serving on an ephemeral loopback port, and a real
/// HTTP client with a pool wide enough for many requests in flight.
struct RunningApp {
    let app: Application
    let port: Int
    let client: HTTPClient

    static func with(_ configure: (Application) async throws -> Void,
                     _ body: (RunningApp) async throws -> Void) async throws {
        let app = try await Application.make(.testing)
        app.logger.logLevel = .error
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await configure(app)
            try await app.asyncBoot()
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            let port = try #require(app.http.server.shared.localAddress?.port)
            try await body(RunningApp(app: app, port: port, client: client))
        } catch {
            try? await client.shutdown()
            await app.server.shutdown()
            try? await app.asyncShutdown()
            throw error
        }
        try await client.shutdown()
        await app.server.shutdown()
        try await app.asyncShutdown()
    }

    struct Reply {
        let status: Int
        let headers: HTTPHeaders
        let body: String

        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] }
    }

    func send(_ path: String, method: HTTPMethod = .POST, token: String? = nil, headers: [(String, String)] = [],
              body: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: body))
    }
}
