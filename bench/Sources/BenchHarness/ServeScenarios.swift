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
/// - `serve-grpc-known`, `serve-grpc-distinct`: the same through the gRPC door, Envoy's
///   `Authorization/Check` call written as HTTP/2 frames (``GRPCCalls``) to the door's handlers in an `EmbeddedChannel`,
///   its answer frames taken back. The two doors' instruction counts, side by side, are the ratio issue 42's gRPC goal
///   asks of the service's CPU (the kernel's socket work, about the same for both, left out).
func serveScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    guard let projectID = fixtures.audiences["firebase"] else { throw BenchError("no audience for firebase") }
    let token = try fixtures.token("firebase")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idtk-bench-serve-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let keys = directory.appendingPathComponent("keys.json").path
    try Data(fixtures.jwksJSON.utf8).write(to: URL(fileURLWithPath: keys))
    let request = Array("GET /verify HTTP/1.1\r\nHost: idtoken\r\nAuthorization: Bearer \(token)\r\nUser-Agent: bench\r\n\r\n".utf8)

    return try [("known", 8192), ("distinct", 0)].flatMap { label, cache -> [Scenario] in
        let name = "serve-http-\(label)"
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
        var scenarios = [Scenario(name: name, summary: "idtoken serve's HTTP door in an EmbeddedChannel, a Firebase token, verified-token cache \(cache > 0 ? "on" : "off")",
                                  baseline: "raw-rsa2048", makeOperation: serve)]
        scenarios.append(try grpcScenario(name: "serve-grpc-\(label)", service: service, token: token, cache: cache > 0))
        return scenarios
    }
}

/// The gRPC door's scenario over `service`: each operation is one `Check` call on a new stream of one connection.
func grpcScenario(name: String, service: ServeService, token: String, cache: Bool) throws -> Scenario {
    let serve: @Sendable () -> (() -> Bool) = {
        let channel = EmbeddedChannel()
        try? channel.pipeline.syncOperations.addHandlers(service.grpcConnectionHandlers())
        try? channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        var calls = GRPCCalls(token: token)
        var input = channel.allocator.buffer(capacity: 4096)
        var output = channel.allocator.buffer(capacity: 4096)
        input.writeBytes(GRPCCalls.opening)
        _ = try? channel.writeInbound(input)
        while let _ = try? channel.readOutbound(as: ByteBuffer.self) {}
        return {
            input.clear()
            calls.writeNext(into: &input)
            guard (try? channel.writeInbound(input)) != nil else { return false }
            // The door writes a frame's header and its payload as buffers of their own: read as one.
            output.clear()
            while var written = try? channel.readOutbound(as: ByteBuffer.self) { output.writeBuffer(&written) }
            return calls.read(output)
        }
    }
    guard serve()() else { throw BenchError("\(name): the gRPC door does not allow the firebase fixture") }
    return Scenario(name: name, summary: "idtoken serve's gRPC door in an EmbeddedChannel, Envoy's Check call, a Firebase token, verified-token cache \(cache ? "on" : "off")",
                    baseline: "raw-rsa2048", makeOperation: serve)
}

/// Envoy's `ext_authz` calls as a client writes them on one HTTP/2 connection, built by hand: the preface and settings,
/// then for each call a HEADERS frame and a DATA frame holding the `CheckRequest` (the shape `bench/grpc_load.py`
/// sends, `token` in its Authorization header). The first call's header block adds its headers to HPACK's dynamic
/// table and later calls name them by index, as Envoy's and h2load's encoders do; the connection window the door
/// writes its answers into is kept open with WINDOW_UPDATE frames for what it has written.
struct GRPCCalls {
    /// The client connection preface, empty SETTINGS, and the connection window raised to 1 GiB.
    static let opening: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + frame(type: 0x4, flags: 0, stream: 0, [])
        + frame(type: 0x8, flags: 0, stream: 0, be32(1 << 30))

    private var stream: UInt32 = 1
    private let message: [UInt8]
    /// DATA bytes the door has written since the last WINDOW_UPDATE sent.
    private var received = 0

    init(token: String) {
        var http = Self.field(2, "GET") + Self.field(4, "/app/orders") + Self.field(5, "app.example.com") + Self.field(10, "HTTP/1.1")
        for (key, value) in [("authorization", "Bearer " + token), ("user-agent", "Mozilla/5.0 (bench)"), ("accept", "application/json"),
                             ("x-request-id", "4f1c2d"), (":authority", "app.example.com"), (":method", "GET"),
                             (":path", "/app/orders"), ("x-forwarded-proto", "https")] {
            http += Self.field(3, Self.field(1, key) + Self.field(2, value))
        }
        // CheckRequest { attributes (1) { request (4) { time (1), http (2) } } }, after gRPC's length prefix.
        let request = Self.field(1, Self.field(4, Self.field(1, [0x08, 0x01]) + Self.field(2, http)))
        message = [0] + Self.be32(request.count) + request
    }

    /// The next call's frames, on a stream of its own; first any window the door's earlier answers used.
    mutating func writeNext(into buffer: inout ByteBuffer) {
        if received >= 1 << 20 {
            buffer.writeBytes(Self.frame(type: 0x8, flags: 0, stream: 0, Self.be32(received)))
            received = 0
        }
        let block = stream == 1 ? Self.firstBlock : Self.laterBlock
        buffer.writeBytes(Self.frameHeader(length: block.count, type: 0x1, flags: 0x4, stream: stream))  // END_HEADERS
        buffer.writeBytes(block)
        buffer.writeBytes(Self.frameHeader(length: message.count, type: 0x0, flags: 0x1, stream: stream))  // END_STREAM
        buffer.writeBytes(message)
        stream &+= 2
    }

    /// Reads the door's frames, whole; true when they hold a `CheckResponse` with `ok_response`, the door's allow.
    mutating func read(_ frames: ByteBuffer) -> Bool {
        var frames = frames
        var allowed = false
        // Each frame's header: length (24 bits) and type, then flags and the stream ID.
        while let word = frames.readInteger(as: UInt32.self), frames.readableBytes >= Int(word >> 8) + 5 {
            let length = Int(word >> 8)
            frames.moveReaderIndex(forwardBy: 5)
            if word & 0xFF == 0x0 {
                received += length
                if let message = frames.getSlice(at: frames.readerIndex, length: length), Self.allows(message) { allowed = true }
            }
            frames.moveReaderIndex(forwardBy: length)
        }
        return allowed
    }

    /// Whether a DATA frame's gRPC message (after its 5-byte prefix) is a `CheckResponse` with `ok_response` (3).
    private static func allows(_ message: ByteBuffer) -> Bool {
        var message = message
        guard message.readableBytes > 5 else { return false }
        message.moveReaderIndex(forwardBy: 5)
        // Its top-level fields, all length-delimited (status, denied_response, ok_response), lengths under 2^14.
        while let tag = message.readInteger(as: UInt8.self), tag & 7 == 2, let first = message.readInteger(as: UInt8.self) {
            var length = Int(first & 0x7F)
            if first & 0x80 != 0 {
                guard let second = message.readInteger(as: UInt8.self) else { return false }
                length |= Int(second) << 7
            }
            if tag >> 3 == 3 { return true }
            guard message.readableBytes >= length else { return false }
            message.moveReaderIndex(forwardBy: length)
        }
        return false
    }

    // The header blocks (HPACK, RFC 7541): POST and http from the static table; :path, :authority, content-type, te
    // and grpc-timeout literal with incremental indexing in the first call, then by their dynamic-table indexes (the
    // newest entry is 62).
    private static let firstBlock: [UInt8] = [0x83, 0x86]
        + [0x44] + string("/envoy.service.auth.v3.Authorization/Check")
        + [0x41] + string("ext-authz")
        + [0x5F] + string("application/grpc")
        + [0x40] + string("te") + string("trailers")
        + [0x40] + string("grpc-timeout") + string("200m")
    private static let laterBlock: [UInt8] = [0x83, 0x86, 0x80 | 66, 0x80 | 65, 0x80 | 64, 0x80 | 63, 0x80 | 62]

    private static func string(_ text: String) -> [UInt8] { [UInt8(text.utf8.count)] + Array(text.utf8) }

    private static func frameHeader(length: Int, type: UInt8, flags: UInt8, stream: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length),
         type, flags] + be32(Int(stream))
    }

    private static func frame(type: UInt8, flags: UInt8, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        frameHeader(length: payload.count, type: type, flags: flags, stream: stream) + payload
    }

    private static func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    // Protobuf: length-delimited fields.
    private static func field(_ number: Int, _ bytes: [UInt8]) -> [UInt8] { [UInt8(number << 3 | 2)] + varint(bytes.count) + bytes }
    private static func field(_ number: Int, _ text: String) -> [UInt8] { field(number, Array(text.utf8)) }
    private static func varint(_ value: Int) -> [UInt8] {
        var value = value, out: [UInt8] = []
        while value >= 0x80 { out.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
        return out + [UInt8(value)]
    }
}
