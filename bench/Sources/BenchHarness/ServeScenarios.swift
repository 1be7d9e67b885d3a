import Foundation
import IDTokenConfiguration
import IDTokenServe
import NIOCore
import NIOEmbedded

/// `idtoken serve`'s HTTP door without the network: a request's bytes handed to its connection handler
/// (``ServeConnection`` in an `EmbeddedChannel`) and the answer's bytes taken back, as one event-loop read cycle does
/// it. What a request costs the door itself (parser, decision, identity headers, the answer's bytes and NIO's pipeline
/// around them), the kernel's socket work left out: the user-space part of the serve benchmark's CPU a request,
/// stable under callgrind (`bench/callgrind.sh serve-http-known`), where wrk's figures on a shared machine are not.
///
/// - `serve-http-known`: one Firebase token over and over, the verified-token cache answering (a token seen before).
/// - `serve-http-distinct`: the same token with the cache off, so that every request verifies its signature.
func serveScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    guard let projectID = fixtures.audiences["firebase"] else { throw BenchError("no audience for firebase") }
    let token = try fixtures.token("firebase")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idtk-bench-serve-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let keys = directory.appendingPathComponent("keys.json").path
    try Data(fixtures.jwksJSON.utf8).write(to: URL(fileURLWithPath: keys))
    let request = Array("GET /verify HTTP/1.1\r\nHost: idtoken\r\nAuthorization: Bearer \(token)\r\nUser-Agent: bench\r\n\r\n".utf8)

    return try [("serve-http-known", 8192), ("serve-http-distinct", 0)].map { name, cache in
        let text = """
            {"profiles": [{"provider": "firebase", "projectId": "\(projectID)", "keys": "\(keys)"}],
             "serve": {"verifiedTokenCache": \(cache)}}
            """
        let configuration = try ConfigurationFile.parse(Array(text.utf8), baseDirectory: directory.path)
        let settings = try ServeSettings.parse(configuration.serve, profileNames: configuration.profiles.map(\.name),
                                               baseDirectory: directory.path)
        let service = try ServeService(configuration: configuration, settings: settings, fixedTime: Double(fixtures.now))
        let serve: @Sendable () -> (() -> Bool) = {
            let channel = EmbeddedChannel()
            try? channel.pipeline.syncOperations.addHandler(service.httpConnectionHandler())
            try? channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            var input = channel.allocator.buffer(capacity: request.count)
            return {
                input.clear()
                input.writeBytes(request)
                guard (try? channel.writeInbound(input)) != nil,
                      let answer = try? channel.readOutbound(as: ByteBuffer.self) else { return false }
                return answer.readableBytesView.starts(with: "HTTP/1.1 200".utf8)
            }
        }
        guard serve()() else { throw BenchError("\(name): the HTTP door does not answer the firebase fixture 200") }
        return Scenario(name: name, summary: "idtoken serve's HTTP door in an EmbeddedChannel, a Firebase token, verified-token cache \(cache > 0 ? "on" : "off")",
                        baseline: "raw-rsa2048", makeOperation: serve)
    }
}
