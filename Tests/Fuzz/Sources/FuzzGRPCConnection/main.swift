import FuzzDriver
import Logging
@testable import IDTokenConfiguration  // package API, reached as the audit line target does
@testable import IDTokenServe  // the connection handler is internal to the service; -enable-testing builds reach it
import NIOCore
import NIOEmbedded

// The gRPC door's HTTP/2 connection (GRPCConnection) on hostile bytes: what any peer that reaches
// `--grpc-listen` can send, frames, header blocks and messages alike. The service is the bundled sample's
// (Vectors/samples/audit-config.json: Firebase, Apple and Facebook profiles on static keys, a fixed time).
//
// The first input byte says how the rest arrives: whether the client preface and an empty SETTINGS frame come first
// (so that most inputs reach the frames past them), and the size of the reads the bytes come in a second time: 1 to 64
// bytes (more for a long input, read in at most about 256 reads). Checks, besides "never crash":
// - what the door writes is a sequence of whole HTTP/2 frames, none above 16 KiB, its own SETTINGS first;
// - after a GOAWAY with an error code it writes nothing; after one with NO_ERROR (shutdown, or the peer's own GOAWAY),
//   only frames of the streams it names as taken, and any later GOAWAY names no more;
// - HEADERS, DATA and RST_STREAM frames are on client (odd) stream IDs, and DATA only on a stream whose response
//   HEADERS came first; trailers (END_STREAM) end a stream, after which nothing more is written on it;
// - it writes at most 1 KiB plus 32 bytes for each byte received (no flood is amplified without bound);
// - the same bytes in one read or in small reads get the same frames written.

let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]

let service: ServeService = {
    let directory = Fuzz.repositoryRoot.appendingPathComponent("Vectors/samples").path
    do {
        let configuration = try ConfigurationFile.parse(Fuzz.read("Vectors/samples/audit-config.json"), baseDirectory: directory)
        let settings = try ServeSettings.parse(configuration.serve, profileNames: configuration.profiles.map(\.name),
                                               baseDirectory: directory)
        // Refusals are logged at `info`: not a line each of the fuzzer's inputs.
        var quiet = Logger(label: "idtoken.serve")
        quiet.logLevel = .error
        return try ServeService(configuration: configuration, settings: settings, fixedTime: 1_767_268_800, logger: quiet,
                                keyLogger: quiet)
    } catch {
        Fuzz.fail("the sample configuration does not make a service: \(error)")
    }
}()

/// Feeds `input` to a new connection, in reads of `piece` bytes (0: one read); returns what the connection wrote.
func run(_ input: [UInt8], piece: Int) -> [UInt8] {
    let channel = EmbeddedChannel()
    do {
        try channel.pipeline.syncOperations.addHandlers(service.grpcConnectionHandlers())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    } catch {
        Fuzz.fail("the connection does not start: \(error)")
    }
    var written: [UInt8] = []
    func drain() {
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) { written += buffer.readableBytesView }
    }
    drain()
    var start = 0
    while start < input.count && channel.isActive {
        let end = piece == 0 ? input.count : min(input.count, start + piece)
        var buffer = channel.allocator.buffer(capacity: end - start)
        buffer.writeBytes(input[start..<end])
        _ = try? channel.writeInbound(buffer)
        drain()
        start = end
    }
    _ = try? channel.finish()
    drain()
    // The connection's timer task holds it (through its context) until it runs: run it once the connection is
    // closed, when it stops without scheduling the next, so that nothing of the connection outlives the run.
    channel.embeddedEventLoop.advanceTime(by: .hours(1))
    return written
}

/// The frames in `bytes`, checked as the header says.
func check(_ bytes: [UInt8], input: Int) {
    if bytes.count > 1024 + 32 * input { Fuzz.fail("wrote \(bytes.count) bytes for \(input) received") }
    var at = 0, first = true
    // The last stream the latest GOAWAY named, and whether one ended the connection with an error.
    var lastTaken: UInt32?, ended = false
    var answered = Set<UInt32>(), closed = Set<UInt32>()
    while at < bytes.count {
        guard bytes.count - at >= 9 else { Fuzz.fail("a partial frame header at \(at): \(Fuzz.show(bytes[at...]))") }
        let length = Int(bytes[at]) << 16 | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2])
        let type = bytes[at + 3], flags = bytes[at + 4]
        let stream = (UInt32(bytes[at + 5]) << 24 | UInt32(bytes[at + 6]) << 16 | UInt32(bytes[at + 7]) << 8 | UInt32(bytes[at + 8])) & 0x7FFF_FFFF
        if length > 16_384 { Fuzz.fail("a frame of \(length) bytes") }
        if bytes.count - at - 9 < length { Fuzz.fail("a frame of \(length) bytes with \(bytes.count - at - 9) written") }
        if first && (type != 4 || flags != 0) { Fuzz.fail("the first frame is type \(type), not the door's SETTINGS") }
        if ended { Fuzz.fail("a frame (type \(type)) after a GOAWAY with an error") }
        if let lastTaken, stream > lastTaken { Fuzz.fail("a frame (type \(type)) on stream \(stream), past the GOAWAY's \(lastTaken)") }
        first = false
        switch type {
        case 0, 1, 3:
            if stream & 1 == 0 { Fuzz.fail("frame type \(type) on stream \(stream)") }
            if closed.contains(stream) && type != 3 { Fuzz.fail("frame type \(type) on stream \(stream) after its END_STREAM") }
            if type == 0 && !answered.contains(stream) { Fuzz.fail("DATA on stream \(stream) before its HEADERS") }
            if type == 1 { answered.insert(stream) }
            if type != 3 && flags & 1 != 0 { closed.insert(stream) }
        case 7:
            guard length >= 8 else { Fuzz.fail("a GOAWAY of \(length) bytes") }
            let named = (UInt32(bytes[at + 9]) << 24 | UInt32(bytes[at + 10]) << 16 | UInt32(bytes[at + 11]) << 8 | UInt32(bytes[at + 12])) & 0x7FFF_FFFF
            let code = UInt32(bytes[at + 13]) << 24 | UInt32(bytes[at + 14]) << 16 | UInt32(bytes[at + 15]) << 8 | UInt32(bytes[at + 16])
            if let lastTaken, named > lastTaken { Fuzz.fail("a GOAWAY naming stream \(named) after one naming \(lastTaken)") }
            lastTaken = named
            ended = code != 0
        default:
            if stream != 0 { Fuzz.fail("frame type \(type) on stream \(stream)") }
        }
        at += 9 + length
    }
}

Fuzz.run { data in
    guard let mode = data.first else { return }
    let input = (mode & 1 == 0 ? preface : []) + Array(data.dropFirst())
    let whole = run(input, piece: 0)
    check(whole, input: input.count)
    // At most about 256 reads, so that a long input in small reads does not take the run's time.
    let piece = max(1 + Int(mode >> 2), input.count / 256 + 1)
    let pieces = run(input, piece: piece)
    if pieces != whole {
        Fuzz.fail("reads of \(piece) bytes wrote \(pieces.count) bytes, one read \(whole.count): \(Fuzz.show(input))")
    }
}
