import IDTokenKit
import JOSE
import NIOCore

/// One connection of `idtoken serve`'s gRPC door (`--grpc-listen`, Envoy's `ext_authz`): `Authorization/Check`, the
/// one unary method, over an HTTP/2 connection this handler reads and writes itself, frame by frame, from the
/// connection's bytes. Like Envoy's own `ext_authz` client, it is a minimal gRPC: no stream channels, no generic RPC
/// machinery, and of HTTP/2 (RFC 9113) only what a server of one unary method needs. Header blocks are decoded by
/// ``HeaderBlockDecoder`` (HPACK, fields lent as bytes) and checked field by field as they are; the answers' header
/// blocks are constant bytes that never touch the peer's table. A call's frames are gathered by stream ID; its
/// `CheckRequest` becomes the ``ServeRequest`` the HTTP door would make (``ExternalAuthorization``), the service decides
/// it as over HTTP (the ID token's signature waiting, under load, for its event loop's ``SignatureBatcher`` beside the
/// HTTP door's), and the answer is written as three frames: the response headers, the message, and trailers with
/// `grpc-status: 0` (the verdict itself is in the message).
///
/// Bounds (the door is exposed to whatever reaches the sidecar):
/// - At most 100 concurrent calls; a stream opened beyond them is refused (RST_STREAM `REFUSED_STREAM`).
/// - A header block (HEADERS and its CONTINUATION frames) is at most `serve.maxHeaderBytes + 1 KiB` on the wire, in at
///   most one frame for each 256 of those bytes, and decodes to at most `serve.maxHeaderBytes` (an HPACK bomb stops as
///   it decodes): beyond any of these, the connection ends with a GOAWAY (`ENHANCE_YOUR_CALM`).
/// - Rapid reset (CVE-2023-44487): more than 200 calls reset by the peer within 30 seconds end the connection with a
///   GOAWAY (`ENHANCE_YOUR_CALM`).
/// - Frames above 16 KiB, frames on streams never opened or on the server's (even) stream IDs, a frame inside a header
///   block, a window past 2^31 − 1, a header block HPACK cannot decode: the connection ends with the GOAWAY RFC 9113
///   names for each.
/// - A message is at most `2 × serve.maxHeaderBytes + 16 KiB` (a request head's worth of headers and Envoy's
///   attributes): a larger one is answered RESOURCE_EXHAUSTED and the rest of its stream dropped as it comes.
/// - Flow control: the connection's receive window is 1 MiB, and a call's bytes are given back to it only once the
///   call has been read whole (or refused), so a peer holds at most 1 MiB of unfinished calls here. Answers wait for
///   the peer's windows (at most one small answer a call); one still waiting after `serve.requestTimeoutSeconds` is
///   reset (`CANCEL`).
/// - A call not complete within `serve.requestTimeoutSeconds` of its headers, or past its `grpc-timeout`, is answered
///   DEADLINE_EXCEEDED; a connection with no call for `serve.idleTimeoutSeconds` is closed with a GOAWAY. The times
///   are checked by one timer per connection, as ``ServeConnection`` checks its own.
/// - Backpressure: while the bytes written and not yet taken by the peer exceed the channel's high water mark, no
///   more frames are handled and none read (SETTINGS and PING floods from a peer that does not read stop there).
/// - Shutdown (`ChannelShouldQuiesceEvent`), or the peer's GOAWAY: a GOAWAY naming the last stream taken; the calls
///   in flight are answered, streams the peer opens after it are ignored, then the connection closes.
final class GRPCConnection: ChannelDuplexHandler, FlushesAnswers {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The connection's receive window (HTTP/2's initial 65,535 raised to this when the connection opens).
    static let connectionWindow = 1 << 20
    static let maxConcurrentStreams = 100
    /// The largest frame payload this door takes (HTTP/2's default, which it does not raise).
    static let maxFrameSize = 16_384
    /// Calls the peer may reset within ``resetWindow`` before the connection ends (rapid reset).
    static let maxResets = 200
    static let resetWindow = TimeAmount.seconds(30)
    /// The most bytes written and not yet handed to the channel before they are (so that writability counts them).
    private static let outputChunk = 16 * 1024

    /// The window each stream gets (SETTINGS_INITIAL_WINDOW_SIZE): the largest message taken, and some.
    static func initialWindow(_ settings: ServeSettings) -> Int { max(65_535, maximumMessage(settings) + 1024) }
    static func maximumMessage(_ settings: ServeSettings) -> Int { 2 * settings.maxHeaderBytes + 16 * 1024 }

    /// HTTP/2 frame types (RFC 9113 §6).
    enum FrameType: UInt8 {
        case data = 0, headers = 1, priority = 2, rstStream = 3, settings = 4, pushPromise = 5, ping = 6, goAway = 7
        case windowUpdate = 8, continuation = 9
    }

    /// HTTP/2 error codes (RFC 9113 §7).
    enum ErrorCode: UInt32 {
        case noError = 0, protocolError = 1, internalError = 2, flowControlError = 3, streamClosed = 5, frameSizeError = 6
        case refusedStream = 7, cancel = 8, compressionError = 9, enhanceYourCalm = 11
    }

    private static let endStream: UInt8 = 0x1, ack: UInt8 = 0x1, endHeaders: UInt8 = 0x4, padded: UInt8 = 0x8
    private static let priorityFlag: UInt8 = 0x20
    static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private struct Call {
        enum Phase {
            /// The request's bytes are arriving.
            case reading
            /// Decided or being decided; the answer is written once ready.
            case answering
            /// Answered, its message waiting for the peer's window (``waiting``), the trailers after it.
            case sending
        }
        var phase = Phase.reading
        var message: ByteBuffer?
        /// Flow-controlled bytes received and not yet given back to the connection window.
        var held = 0
        /// What the peer may still send on this stream (this door never raises a stream's window).
        var receiveWindow: Int
        /// What this door may still send on this stream.
        var sendWindow: Int
        /// The answer's message bytes not sent yet (phase `sending`).
        var waiting: ByteBuffer?
        let started: NIODeadline
        /// From `grpc-timeout`.
        let deadline: NIODeadline?
        /// Whether the peer has ended its side (END_STREAM).
        var peerDone = false
    }

    /// A header block whose CONTINUATION frames are still to come.
    private struct PartialBlock {
        let stream: UInt32
        let endStream: Bool
        var bytes: ByteBuffer
        var frames: Int
    }

    private let service: ServeService
    private let door: ExternalAuthorization
    private let batcher: SignatureBatcher?
    /// This connection's event loop's flusher, for the answers of a batch or an asynchronous wait (the answers of a
    /// read are flushed at its end).
    let flusher: AnswerFlusher?
    private let maximumMessage: Int
    private let initialWindow: Int
    private let maxHeaderBlockBytes: Int
    /// The most frames one header block may take (HEADERS and its CONTINUATIONs): full frames, or smaller ones of
    /// 256 bytes on average, and no more (a flood of empty CONTINUATIONs ends there).
    private let maxHeaderBlockFrames: Int
    private let requestTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    // The connection's state is used on its event loop only, one handler call at a time: its accesses need no
    // run-time exclusivity check (about 90 instructions each, dozens a call).
    @exclusivity(unchecked) private var decoder: HeaderBlockDecoder
    @exclusivity(unchecked) private var calls = Calls<Call>()
    @exclusivity(unchecked) private var highestStream: UInt32 = 0
    /// Bytes received and not yet handled: at most one read's, held while the peer does not take its answers.
    @exclusivity(unchecked) private var inbound: ByteBuffer?
    @exclusivity(unchecked) private var prefaceRead = false
    @exclusivity(unchecked) private var settingsRead = false
    @exclusivity(unchecked) private var partial: PartialBlock?
    /// Frames written and not yet handed to the channel (see ``writeHeld(context:)``).
    @exclusivity(unchecked) private var output: ByteBuffer?
    /// What the peer lets this door send: on the connection, and on a new stream (SETTINGS_INITIAL_WINDOW_SIZE).
    @exclusivity(unchecked) private var sendWindow = 65_535
    @exclusivity(unchecked) private var peerInitialWindow = 65_535
    @exclusivity(unchecked) private var peerMaxFrame = 16_384
    /// What the peer may still send on the connection, and the bytes of finished calls to give back to it.
    @exclusivity(unchecked) private var receiveWindow = 65_535
    @exclusivity(unchecked) private var credit = 0
    @exclusivity(unchecked) private var resets = 0
    @exclusivity(unchecked) private var resetsSince = NIODeadline.uptimeNanoseconds(0)
    @exclusivity(unchecked) var unflushed = false
    @exclusivity(unchecked) var flushQueued = false
    @exclusivity(unchecked) private var readHeld = false
    /// Shutting down, or the peer has sent GOAWAY: no new call is taken, and the connection closes when the last
    /// one is answered.
    @exclusivity(unchecked) private var quiescing = false
    @exclusivity(unchecked) private var open = true
    @exclusivity(unchecked) private var lastActivity = NIODeadline.now()
    @exclusivity(unchecked) private var tick = TimeAmount.seconds(1)

    // The answers' header blocks (HPACK, RFC 7541), literal and never indexed into the peer's table: `:status: 200`
    // (static index 8), `content-type: application/grpc` (its name static index 31), `grpc-status: 0`.
    private static let responseBlock: [UInt8] = [0x88, 0x0F, 0x10, 16] + Array("application/grpc".utf8)
    private static let okTrailersBlock: [UInt8] = [0x00, 11] + Array("grpc-status".utf8) + [1, UInt8(ascii: "0")]
    private static let unsupportedMediaBlock: [UInt8] = [0x08, 3] + Array("415".utf8) + [0x0F, 0x10, 10] + Array("text/plain".utf8)

    init(service: ServeService, door: ExternalAuthorization, batcher: SignatureBatcher?, flusher: AnswerFlusher?) {
        self.service = service
        self.door = door
        self.batcher = batcher
        self.flusher = flusher
        let settings = service.settings
        self.maximumMessage = Self.maximumMessage(settings)
        self.initialWindow = Self.initialWindow(settings)
        self.maxHeaderBlockBytes = settings.maxHeaderBytes + 1024
        self.maxHeaderBlockFrames = maxHeaderBlockBytes / 256 + 16
        self.requestTimeout = .seconds(Int64(settings.requestTimeoutSeconds))
        self.idleTimeout = .seconds(Int64(settings.idleTimeoutSeconds))
        self.decoder = HeaderBlockDecoder(maxListSize: settings.maxHeaderBytes)
    }

    // MARK: Lifecycle and limits

    func handlerAdded(context: ChannelHandlerContext) {
        lastActivity = context.eventLoop.now
        tick = .nanoseconds(min(1_000_000_000, max(250_000_000, min(requestTimeout.nanoseconds, idleTimeout.nanoseconds) / 4)))
        scheduleCheck(context: context)
        if context.channel.isActive { opened(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        opened(context: context)
        context.fireChannelActive()
    }

    @exclusivity(unchecked) private var greeted = false

    /// The server's connection preface: its SETTINGS (100 streams, header lists up to `maxHeaderBytes`, a stream
    /// window that holds the largest message taken), and the connection window raised to ``connectionWindow``.
    private func opened(context: ChannelHandlerContext) {
        guard !greeted else { return }
        greeted = true
        let settings: [(UInt16, Int)] = [(0x3, Self.maxConcurrentStreams), (0x6, service.settings.maxHeaderBytes), (0x4, initialWindow)]
        emit(.settings, flags: 0, stream: 0, length: 6 * settings.count, context: context) { out in
            for (identifier, value) in settings {
                out.writeInteger(identifier)
                out.writeInteger(UInt32(value))
            }
        }
        sendWindowUpdate(stream: 0, Self.connectionWindow - 65_535, context: context)
        receiveWindow = Self.connectionWindow
        flushIfNeeded(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        open = false
        calls.removeAll()
        inbound = nil
        output = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        open = false
    }

    /// A one-shot task that schedules the next itself, never cancelled (see ``ServeConnection``).
    private func scheduleCheck(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: tick) {
            let (handler, context) = loopBound.value
            guard handler.open else { return }
            handler.check(context: context)
            if handler.open { handler.scheduleCheck(context: context) }
        }
    }

    private func check(context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        if calls.isEmpty {
            if now - lastActivity >= idleTimeout { goAway(.noError, context: context) }
            return
        }
        var expired: [UInt32] = [], stalled: [UInt32] = []
        for (stream, call) in calls.entries {
            if call.phase == .sending {
                // An answer the peer has not let through its windows within the request time: the stream ends.
                if now - call.started >= requestTimeout { stalled.append(stream) }
            } else if let deadline = call.deadline, now >= deadline {
                expired.append(stream)
            } else if call.phase == .reading && now - call.started >= requestTimeout {
                expired.append(stream)
            }
        }
        for stream in stalled { reset(stream, .cancel, context: context) }
        for stream in expired {
            service.metrics.countRequestTimeout()
            fail(stream, .deadlineExceeded, "the call was not answered within its deadline (its grpc-timeout; serve.requestTimeoutSeconds to send its request)",
                 context: context)
        }
        flushIfNeeded(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            quiesce(context: context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// No new call: a GOAWAY naming the last stream taken, and the connection closes once the calls in flight are
    /// answered.
    private func quiesce(context: ChannelHandlerContext) {
        guard open, !quiescing else { return }
        quiescing = true
        goAwayFrame(.noError, context: context)
        flushIfNeeded(context: context)
        closeIfQuiesced(context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        open = false
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable || !open { context.read() } else { readHeld = true }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            // Frames held back while the peer did not take its answers are handled first, then more are read.
            handleFrames(context: context)
            flushIfNeeded(context: context)
            if readHeld && context.channel.isWritable {
                readHeld = false
                context.read()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    private func closeIfQuiesced(context: ChannelHandlerContext) {
        guard quiescing, open, calls.isEmpty else { return }
        close(context: context)
    }

    /// Ends the connection for a connection error: a GOAWAY with `code`, then the close.
    private func goAway(_ code: ErrorCode, context: ChannelHandlerContext) {
        guard open else { return }
        goAwayFrame(code, context: context)
        close(context: context)
    }

    /// Closes once what was written is with the kernel.
    private func close(context: ChannelHandlerContext) {
        guard open else { return }
        open = false
        inbound = nil
        writeHeld(context: context)
        unflushed = false
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)))
            .whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: Reading frames

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard open else { return }
        var bytes = unwrapInboundIn(data)
        if inbound == nil || inbound!.readableBytes == 0 {
            inbound = bytes
        } else {
            inbound!.writeBuffer(&bytes)
        }
        handleFrames(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Once a read cycle (settings, pings and window updates count: the peer is there).
        lastActivity = context.eventLoop.now
        // At once: a connection carries many calls, whose answers of this read leave together already; holding them
        // for the other connections' reads would only add to their latency (measured: no CPU saved).
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    /// Handles the whole frames received, while the peer takes what is written.
    private func handleFrames(context: ChannelHandlerContext) {
        guard var bytes = inbound else { return }
        inbound = nil
        defer { if open, bytes.readableBytes > 0 { inbound = bytes } }
        if !prefaceRead {
            guard bytes.readableBytes >= Self.preface.count else {
                // What has come must be the preface's beginning.
                if !bytes.readableBytesView.elementsEqual(Self.preface.prefix(bytes.readableBytes)) { close(context: context) }
                return
            }
            guard bytes.readableBytesView.prefix(Self.preface.count).elementsEqual(Self.preface) else {
                close(context: context)
                return
            }
            bytes.moveReaderIndex(forwardBy: Self.preface.count)
            prefaceRead = true
        }
        while open, context.channel.isWritable, bytes.readableBytes >= 9 {
            let start = bytes.readerIndex
            let word = bytes.getInteger(at: start, as: UInt32.self)!
            let length = Int(word >> 8)
            let type = UInt8(truncatingIfNeeded: word)
            guard length <= Self.maxFrameSize else { return goAway(.frameSizeError, context: context) }
            guard bytes.readableBytes >= 9 + length else { return }
            let flags = bytes.getInteger(at: start + 4, as: UInt8.self)!
            let stream = bytes.getInteger(at: start + 5, as: UInt32.self)! & 0x7FFF_FFFF
            bytes.moveReaderIndex(forwardBy: 9)
            let payload = bytes.readSlice(length: length)!
            // The client's preface ends with its SETTINGS; a header block is followed by its CONTINUATIONs only.
            if !settingsRead {
                guard type == FrameType.settings.rawValue, flags & Self.ack == 0 else { return goAway(.protocolError, context: context) }
                settingsRead = true
            }
            if let partial, type != FrameType.continuation.rawValue || stream != partial.stream {
                return goAway(.protocolError, context: context)
            }
            frame(type, flags: flags, stream: stream, payload: payload, context: context)
        }
    }

    private func frame(_ type: UInt8, flags: UInt8, stream: UInt32, payload: ByteBuffer, context: ChannelHandlerContext) {
        switch FrameType(rawValue: type) {
        case .data: data(flags: flags, stream: stream, payload: payload, context: context)
        case .headers: headers(flags: flags, stream: stream, payload: payload, context: context)
        case .priority:
            // Priorities are not used; a malformed one on a call ends the call (a stream error).
            guard stream != 0 else { return goAway(.protocolError, context: context) }
            if payload.readableBytes != 5, calls[stream] != nil { reset(stream, .frameSizeError, context: context) }
        case .rstStream:
            guard stream != 0, stream <= highestStream || quiescing else { return goAway(.protocolError, context: context) }
            guard payload.readableBytes == 4 else { return goAway(.frameSizeError, context: context) }
            peerReset(stream, context: context)
        case .settings: settings(flags: flags, stream: stream, payload: payload, context: context)
        case .pushPromise: goAway(.protocolError, context: context)
        case .ping:
            guard stream == 0 else { return goAway(.protocolError, context: context) }
            guard payload.readableBytes == 8 else { return goAway(.frameSizeError, context: context) }
            guard flags & Self.ack == 0 else { return }
            var payload = payload
            emit(.ping, flags: Self.ack, stream: 0, length: 8, context: context) { $0.writeBuffer(&payload) }
        case .goAway:
            guard stream == 0 else { return goAway(.protocolError, context: context) }
            // The peer takes no new call: those in flight are answered, then the connection closes.
            quiesce(context: context)
        case .windowUpdate: windowUpdate(stream: stream, payload: payload, context: context)
        case .continuation: continuation(flags: flags, stream: stream, payload: payload, context: context)
        case nil:
            break  // Frames of unknown types are ignored (RFC 9113 §4.1).
        }
    }

    /// A frame's payload without its padding (PADDED: a length byte first, that many bytes last); nil when the padding
    /// is longer than the payload.
    private static func unpadded(_ payload: ByteBuffer, flags: UInt8) -> ByteBuffer? {
        guard flags & padded != 0 else { return payload }
        var payload = payload
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else { return nil }
        return payload.getSlice(at: payload.readerIndex, length: payload.readableBytes - Int(padding))
    }

    private func data(flags: UInt8, stream: UInt32, payload: ByteBuffer, context: ChannelHandlerContext) {
        guard stream != 0, stream <= highestStream || quiescing else { return goAway(.protocolError, context: context) }
        // The whole payload counts against the windows, padding included.
        let length = payload.readableBytes
        guard length <= receiveWindow else { return goAway(.flowControlError, context: context) }
        receiveWindow -= length
        guard let bytes = Self.unpadded(payload, flags: flags) else { return goAway(.protocolError, context: context) }
        guard var call = calls[stream] else {
            // A stream this door has ended: its bytes go back to the window.
            credit += length
            giveBackWindow(context: context)
            return
        }
        guard !call.peerDone, length <= call.receiveWindow else {
            // DATA after the peer's END_STREAM, or past the stream's window.
            credit += length
            return reset(stream, call.peerDone ? .streamClosed : .flowControlError, context: context)
        }
        call.receiveWindow -= length
        if flags & Self.endStream != 0 { call.peerDone = true }
        switch call.phase {
        case .reading:
            call.held += length
            var bytes = bytes
            guard (call.message?.readableBytes ?? 0) + bytes.readableBytes <= maximumMessage + 5 else {
                calls[stream] = call
                fail(stream, .resourceExhausted, "the CheckRequest is larger than \(maximumMessage) bytes", context: context)
                return
            }
            if call.message == nil { call.message = bytes } else { call.message!.writeBuffer(&bytes) }
            calls[stream] = call
            if call.peerDone { complete(stream, context: context) }
        case .answering, .sending:
            credit += length
            calls[stream] = call
            giveBackWindow(context: context)
        }
    }

    private func headers(flags: UInt8, stream: UInt32, payload: ByteBuffer, context: ChannelHandlerContext) {
        guard stream != 0, stream & 1 == 1 else { return goAway(.protocolError, context: context) }
        guard var block = Self.unpadded(payload, flags: flags) else { return goAway(.protocolError, context: context) }
        if flags & Self.priorityFlag != 0 {
            guard block.readableBytes >= 5 else { return goAway(.frameSizeError, context: context) }
            block.moveReaderIndex(forwardBy: 5)
        }
        let ended = flags & Self.endStream != 0
        guard flags & Self.endHeaders != 0 else {
            guard block.readableBytes <= maxHeaderBlockBytes else { return goAway(.enhanceYourCalm, context: context) }
            var bytes = context.channel.allocator.buffer(capacity: max(1024, block.readableBytes * 2))
            bytes.writeBuffer(&block)
            partial = PartialBlock(stream: stream, endStream: ended, bytes: bytes, frames: 1)
            return
        }
        headerBlock(block, stream: stream, ended: ended, context: context)
    }

    private func continuation(flags: UInt8, stream: UInt32, payload: ByteBuffer, context: ChannelHandlerContext) {
        guard var block = partial, block.stream == stream else { return goAway(.protocolError, context: context) }
        var payload = payload
        block.frames += 1
        guard block.frames <= maxHeaderBlockFrames, block.bytes.readableBytes + payload.readableBytes <= maxHeaderBlockBytes else {
            return goAway(.enhanceYourCalm, context: context)
        }
        block.bytes.writeBuffer(&payload)
        guard flags & Self.endHeaders != 0 else {
            partial = block
            return
        }
        partial = nil
        headerBlock(block.bytes, stream: stream, ended: block.endStream, context: context)
    }

    /// A whole header block: decoded (always, to keep HPACK's table as the peer's) and checked field by field, then a
    /// new call, a call's trailers, or nothing for a stream this door has ended.
    private func headerBlock(_ block: ByteBuffer, stream: UInt32, ended: Bool, context: ChannelHandlerContext) {
        let existing = calls[stream]
        var check = FieldCheck(trailers: existing != nil)
        do {
            try block.withUnsafeReadableBytes { bytes in try decoder.decode(bytes) { name, value in check.add(name, value) } }
        } catch HeaderBlockDecoder.Failure.tooLarge {
            return goAway(.enhanceYourCalm, context: context)
        } catch {
            return goAway(.compressionError, context: context)
        }
        if var call = existing {
            // Trailers from the peer end its side.
            // A malformed one resets the stream (PROTOCOL_ERROR).
            guard ended, !call.peerDone, check.isWellFormed else { return reset(stream, .protocolError, context: context) }
            call.peerDone = true
            calls[stream] = call
            if call.phase == .reading { complete(stream, context: context) }
            return
        }
        // A stream this door has ended (or refused): nothing more to do. After a GOAWAY, a stream the peer opens anyway
        // is ignored (RFC 9113 §6.8): the GOAWAY named the last one taken.
        guard stream > highestStream, !quiescing else { return }
        highestStream = stream
        guard calls.count < Self.maxConcurrentStreams else { return reset(stream, .refusedStream, context: context) }
        begin(stream, check: check, ended: ended, context: context)
    }

    private func settings(flags: UInt8, stream: UInt32, payload: ByteBuffer, context: ChannelHandlerContext) {
        guard stream == 0 else { return goAway(.protocolError, context: context) }
        if flags & Self.ack != 0 {
            if payload.readableBytes != 0 { goAway(.frameSizeError, context: context) }
            return
        }
        guard payload.readableBytes % 6 == 0 else { return goAway(.frameSizeError, context: context) }
        var payload = payload
        while let identifier = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            switch identifier {
            case 0x2:  // ENABLE_PUSH
                guard value <= 1 else { return goAway(.protocolError, context: context) }
            case 0x4:  // INITIAL_WINDOW_SIZE: every stream's window moves by the difference
                guard value <= 0x7FFF_FFFF else { return goAway(.flowControlError, context: context) }
                let delta = Int(value) - peerInitialWindow
                peerInitialWindow = Int(value)
                for (stream, var call) in calls.entries {
                    call.sendWindow += delta
                    guard call.sendWindow <= 0x7FFF_FFFF else { return goAway(.flowControlError, context: context) }
                    calls[stream] = call
                }
            case 0x5:  // MAX_FRAME_SIZE
                guard value >= 16_384, value <= 16_777_215 else { return goAway(.protocolError, context: context) }
                peerMaxFrame = Int(value)
            default:
                break  // HEADER_TABLE_SIZE (this door's answers never use the peer's table), the rest advisory
            }
        }
        emit(.settings, flags: Self.ack, stream: 0, length: 0, context: context) { _ in }
        sendWaiting(context: context)
    }

    private func windowUpdate(stream: UInt32, payload: ByteBuffer, context: ChannelHandlerContext) {
        guard payload.readableBytes == 4 else { return goAway(.frameSizeError, context: context) }
        let increment = Int(payload.getInteger(at: payload.readerIndex, as: UInt32.self)! & 0x7FFF_FFFF)
        if stream == 0 {
            guard increment > 0 else { return goAway(.protocolError, context: context) }
            sendWindow += increment
            guard sendWindow <= 0x7FFF_FFFF else { return goAway(.flowControlError, context: context) }
        } else {
            guard stream <= highestStream || quiescing else { return goAway(.protocolError, context: context) }
            guard var call = calls[stream] else { return }
            guard increment > 0 else { return reset(stream, .protocolError, context: context) }
            call.sendWindow += increment
            calls[stream] = call
            guard call.sendWindow <= 0x7FFF_FFFF else { return reset(stream, .flowControlError, context: context) }
        }
        sendWaiting(context: context)
    }

    /// The peer has reset a call: dropped, its bytes given back. Past ``maxResets`` calls in ``resetWindow``, the
    /// connection ends (rapid reset).
    private func peerReset(_ stream: UInt32, context: ChannelHandlerContext) {
        guard let call = calls.removeValue(forKey: stream) else { return }
        credit += call.held
        let now = NIODeadline.now()
        if now - resetsSince > Self.resetWindow {
            resetsSince = now
            resets = 0
        }
        resets += 1
        guard resets <= Self.maxResets else { return goAway(.enhanceYourCalm, context: context) }
        giveBackWindow(context: context)
        closeIfQuiesced(context: context)
    }

    /// Ends one stream for a stream error: RST_STREAM with `code`, the call (if any) dropped.
    private func reset(_ stream: UInt32, _ code: ErrorCode, context: ChannelHandlerContext) {
        if let call = calls.removeValue(forKey: stream) { credit += call.held }
        rstStream(stream, code, context: context)
        giveBackWindow(context: context)
        closeIfQuiesced(context: context)
    }

    // MARK: Calls

    /// A call's headers: the method, the content type, the deadline, read in the pass that checks the block.
    private func begin(_ stream: UInt32, check: FieldCheck, ended: Bool, context: ChannelHandlerContext) {
        guard check.isWellFormed else { return rstStream(stream, .protocolError, context: context) }
        let head = check.head
        let now = context.eventLoop.now
        calls[stream] = Call(receiveWindow: initialWindow, sendWindow: peerInitialWindow, started: now,
                             deadline: head.timeout.map { now + $0 }, peerDone: ended)
        guard head.isPOST, head.isCheck else {
            fail(stream, .unimplemented, "this service answers \(ExternalAuthorization.checkMethod) only", context: context)
            return
        }
        guard head.isGRPC else {
            headersFrame(stream, Self.unsupportedMediaBlock, endStream: true, context: context)
            finished(stream, context: context)
            return
        }
        if ended { complete(stream, context: context) }
    }

    /// What a call's handling reads of its request headers.
    struct RequestHead {
        var isPOST = false
        /// `:path` is ``ExternalAuthorization/checkMethod``.
        var isCheck = false
        /// `content-type` is `application/grpc` or one of its `+format` / `;parameter` forms.
        var isGRPC = false
        /// `grpc-timeout`, when it is well-formed.
        var timeout: TimeAmount?
    }

    /// Whether a request's header block (or its trailers) is well-formed as RFC 9113 §8.2 and §8.3 say: names
    /// lower-case tokens; the pseudo-headers of a request only (`:method`, `:scheme`, `:path`, `:authority`), each at
    /// most once, before every other field, the first three present (none in trailers); no connection-specific field
    /// (`te` only as `trailers`); no value with NUL, CR or LF, or with whitespace at either end. Fed the block's fields
    /// as they are decoded; what the call needs is read in the same pass, on the bytes in place (`head`; trailers give
    /// nothing).
    struct FieldCheck {
        let trailers: Bool
        private var pseudo: UInt8 = 0
        private var regular = false
        private var refused = false
        private(set) var head = RequestHead()

        init(trailers: Bool) { self.trailers = trailers }

        mutating func add(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
            guard !refused else { return }
            refused = !GRPCConnection.field(name, value, trailers: trailers, pseudo: &pseudo, regular: &regular, head: &head)
        }

        var isWellFormed: Bool { !refused && (trailers || pseudo & 7 == 7) }
    }

    /// One field of a ``FieldCheck``.
    private static func field(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, trailers: Bool,
                              pseudo: inout UInt8, regular: inout Bool, head: inout RequestHead) -> Bool {
        guard let first = name.first else { return false }
        for byte in value where byte == 0 || byte == 10 || byte == 13 { return false }
        if let edge = value.first, edge == 32 || edge == 9 { return false }
        if let edge = value.last, edge == 32 || edge == 9 { return false }
        if first == UInt8(ascii: ":") {
            guard !regular, !trailers else { return false }
            let bit: UInt8
            if equals(name, ":method") {
                bit = 1
                head.isPOST = equals(value, "POST")
            } else if equals(name, ":scheme") {
                bit = 2
            } else if equals(name, ":path") {
                bit = 4
                head.isCheck = equals(value, ExternalAuthorization.checkMethodBytes)
            } else if equals(name, ":authority") {
                bit = 8
            } else {
                return false
            }
            guard pseudo & bit == 0 else { return false }
            pseudo |= bit
            return true
        }
        regular = true
        for byte in name where !isLowerCaseTokenByte(byte) { return false }
        switch name.count {
        case 2 where equals(name, "te"): return equals(value, "trailers")
        case 7 where equals(name, "upgrade"): return false
        case 10 where equals(name, "connection") || equals(name, "keep-alive"): return false
        case 16 where equals(name, "proxy-connection"): return false
        case 17 where equals(name, "transfer-encoding"): return false
        case 12 where equals(name, "content-type"):
            let grpc: StaticString = "application/grpc"
            head.isGRPC = value.count >= 16 && equals(UnsafeRawBufferPointer(rebasing: value[0..<16]), grpc)
        case 12 where equals(name, "grpc-timeout"):
            head.timeout = timeout(String(decoding: value, as: UTF8.self))
        default: break
        }
        return true
    }

    /// Whether `bytes` are `literal`'s, exactly.
    @inline(__always)
    private static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount
            && ByteSearch.equal(bytes, UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inline(__always)
    private static func equals(_ bytes: UnsafeRawBufferPointer, _ other: [UInt8]) -> Bool {
        bytes.count == other.count && other.withUnsafeBytes { ByteSearch.equal(bytes, $0) }
    }

    /// RFC 9110's `tchar`, upper-case letters excluded (HTTP/2 field names are lower-case).
    @inline(__always)
    private static func isLowerCaseTokenByte(_ byte: UInt8) -> Bool {
        // Two 64-bit masks, one bit a byte below 0x80: `!#$%&'*+-.^_`|~`, the digits and the lower-case letters.
        let low: UInt64 = 0x03FF_6CFA_0000_0000, high: UInt64 = 0x57FF_FFFF_C000_0000
        return byte < 64 ? low >> byte & 1 == 1 : byte < 128 && high >> (byte - 64) & 1 == 1
    }

    /// The call's message is whole: decide it.
    private func complete(_ stream: UInt32, context: ChannelHandlerContext) {
        guard var call = calls[stream] else { return }
        call.phase = .answering
        credit += call.held
        call.held = 0
        let message = call.message
        call.message = nil
        calls[stream] = call
        giveBackWindow(context: context)
        // One length-prefixed message, uncompressed (no grpc-encoding is offered).
        guard let message, message.readableBytes >= 5,
              let compressed = message.getInteger(at: message.readerIndex, as: UInt8.self),
              let length = message.getInteger(at: message.readerIndex + 1, as: UInt32.self),
              Int(length) == message.readableBytes - 5 else {
            fail(stream, .internalError, "a Check call carries one length-prefixed CheckRequest", context: context)
            return
        }
        guard compressed == 0 else {
            fail(stream, .unimplemented, "compressed messages are not accepted", context: context)
            return
        }
        // Decided while the message is at hand: the bearer token's bytes are lent to the decision, as over HTTP.
        let decision: ServeDecision
        do {
            decision = try message.withUnsafeReadableBytes { bytes throws(ExternalAuthorization.Malformed) -> ServeDecision in
                let body = UnsafeRawBufferPointer(rebasing: bytes[5...])
                let (request, bearerRange) = try door.request(fromMessage: body, lendingBearerToken: true)
                return service.decide(request, batching: batcher != nil,
                                      lentBearerToken: bearerRange.map { TokenBytes(UnsafeRawBufferPointer(rebasing: body[$0])) })
            }
        } catch {
            fail(stream, .invalidArgument, "not a CheckRequest: \(error.reason)", context: context)
            return
        }
        // The call's time runs from its headers (one clock read a call, when they came).
        decided(decision, stream: stream, started: call.started, context: context)
    }

    /// Writes the answer now, or once it is ready: after an asynchronous wait, or once the token's signature has been
    /// verified with the others of this event-loop cycle.
    private func decided(_ decision: ServeDecision, stream: UInt32, started: NIODeadline, context: ChannelHandlerContext) {
        switch decision {
        case .now(let response):
            answer(response, stream: stream, started: started, context: context)
        case .later(let work):
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.makeFutureWithTask { await work() }.whenSuccess { response in
                let (handler, context) = loopBound.value
                handler.answer(response, stream: stream, started: started, context: context)
                handler.flushSoon(context: context)
            }
        case .signature(let pending, let then):
            guard let batcher, batcher.defers() else {
                decided(then(pending.finish(signatureValid: pending.verifySignature())), stream: stream,
                        started: started, context: context)
                return
            }
            batcher.add(pending) { [self] valid in
                decided(then(pending.finish(signatureValid: valid)), stream: stream, started: started, context: context)
                flushSoon(context: context)
            }
        }
    }

    /// The call's answer: response headers, the `CheckResponse` (as the peer's windows allow), trailers with
    /// `grpc-status: 0`.
    private func answer(_ response: ServeResponse, stream: UInt32, started: NIODeadline, context: ChannelHandlerContext) {
        guard open, var call = calls[stream], call.phase == .answering else { return }
        if let slot = response.slot {
            service.metrics.record(slot: slot, nanoseconds: NIODeadline.now().uptimeNanoseconds &- started.uptimeNanoseconds)
        }
        headersFrame(stream, Self.responseBlock, endStream: false, context: context)
        // The message is written in place, after a DATA frame header whose length is set once it is known; when the
        // peer's windows do not take it whole, it moves out of the frames to wait for them.
        frameHeader(.data, flags: 0, stream: stream, length: 0, context: context)
        let headerAt = output!.writerIndex - 9
        door.writeCheckResponse(response, to: &output!)
        let size = output!.writerIndex - headerAt - 9
        if size <= min(sendWindow, call.sendWindow, peerMaxFrame) {
            let at = headerAt - output!.readerIndex
            output!.withUnsafeMutableReadableBytes { bytes in
                Self.setFrameHeader(UnsafeMutableRawBufferPointer(rebasing: bytes[at..<at + 9]), .data, flags: 0, stream: stream,
                                    length: size)
            }
            sendWindow -= size
            call.sendWindow -= size
            call.phase = .sending
            calls[stream] = call
            headersFrame(stream, Self.okTrailersBlock, endStream: true, context: context)
            finished(stream, context: context)
        } else {
            let message = output!.getSlice(at: headerAt + 9, length: size)
            output!.moveWriterIndex(to: headerAt)
            call.phase = .sending
            call.waiting = message
            calls[stream] = call
            send(stream, context: context)
        }
        if output.map({ $0.readableBytes >= Self.outputChunk }) == true { writeHeld(context: context) }
    }

    /// Sends what the windows allow of a call's waiting message, then, once it is all sent, the trailers.
    private func send(_ stream: UInt32, context: ChannelHandlerContext) {
        guard var call = calls[stream], call.phase == .sending, var message = call.waiting else { return }
        while message.readableBytes > 0 {
            let size = min(message.readableBytes, sendWindow, call.sendWindow, peerMaxFrame)
            guard size > 0 else { break }
            var chunk = message.readSlice(length: size)!
            emit(.data, flags: 0, stream: stream, length: size, context: context) { $0.writeBuffer(&chunk) }
            sendWindow -= size
            call.sendWindow -= size
        }
        guard message.readableBytes == 0 else {
            call.waiting = message
            calls[stream] = call
            return
        }
        call.waiting = nil
        calls[stream] = call
        headersFrame(stream, Self.okTrailersBlock, endStream: true, context: context)
        finished(stream, context: context)
    }

    /// The calls whose answers wait for the peer's windows, after a window grew.
    private func sendWaiting(context: ChannelHandlerContext) {
        guard sendWindow > 0 else { return }
        var waiting: [UInt32] = []
        for (stream, call) in calls.entries where call.phase == .sending { waiting.append(stream) }
        for stream in waiting { send(stream, context: context) }
    }

    /// Ends a call with a gRPC error status (a trailers-only response).
    private func fail(_ stream: UInt32, _ status: ExternalAuthorization.GRPCStatus, _ message: String,
                      context: ChannelHandlerContext) {
        // Not once the answer's headers are written; its bytes go back to the window in `finished`.
        guard let call = calls[stream], call.phase != .sending else { return }
        // grpc-message is percent-encoded: IdentityHeaders.encode writes `%XX` for `%`, `,` and every byte outside
        // printable ASCII.
        let text = Array(IdentityHeaders.encode(message).utf8)
        var block = Self.responseBlock + [0x00, 11] + Array("grpc-status".utf8)
        let code = Array(String(status.rawValue).utf8)
        block += [UInt8(code.count)] + code
        block += [0x00, 12] + Array("grpc-message".utf8)
        Self.writeLength(text.count, into: &block)
        block += text
        headersFrame(stream, block, endStream: true, context: context)
        finished(stream, context: context)
    }

    /// An HPACK string length (RFC 7541 §5.1, a 7-bit prefix, no Huffman coding).
    private static func writeLength(_ length: Int, into block: inout [UInt8]) {
        guard length >= 127 else { return block.append(UInt8(length)) }
        block.append(127)
        var rest = length - 127
        while rest >= 128 {
            block.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        block.append(UInt8(rest))
    }

    /// After the last frame of an answer: a peer that has not ended its side is told to stop (RST_STREAM NO_ERROR,
    /// as gRPC servers do), so that the stream does not hold one of the connection's 100.
    private func finished(_ stream: UInt32, context: ChannelHandlerContext) {
        guard let call = calls.removeValue(forKey: stream) else { return }
        credit += call.held
        if !call.peerDone { rstStream(stream, .noError, context: context) }
        giveBackWindow(context: context)
        closeIfQuiesced(context: context)
    }

    // MARK: Writing frames

    /// Writes a frame (its 9-byte header, then `payload` writes its `length` bytes) after the others not yet handed
    /// to the channel; hands them over past ``outputChunk`` bytes, so that the channel's writability counts them.
    private func emit(_ type: FrameType, flags: UInt8, stream: UInt32, length: Int, context: ChannelHandlerContext,
                      _ payload: (inout ByteBuffer) -> Void) {
        frameHeader(type, flags: flags, stream: stream, length: length, context: context)
        payload(&output!)
        if output!.readableBytes >= Self.outputChunk { writeHeld(context: context) }
    }

    /// A frame's 9-byte header, after the frames not yet handed to the channel.
    private func frameHeader(_ type: FrameType, flags: UInt8, stream: UInt32, length: Int, context: ChannelHandlerContext) {
        if output == nil { output = context.channel.allocator.buffer(capacity: max(1024, 9 + length)) }
        output!.writeWithUnsafeMutableBytes(minimumWritableBytes: 9) { header in
            Self.setFrameHeader(header, type, flags: flags, stream: stream, length: length)
            return 9
        }
        unflushed = true
    }

    private static func setFrameHeader(_ header: UnsafeMutableRawBufferPointer, _ type: FrameType, flags: UInt8, stream: UInt32,
                                       length: Int) {
        header[0] = UInt8(truncatingIfNeeded: length >> 16)
        header[1] = UInt8(truncatingIfNeeded: length >> 8)
        header[2] = UInt8(truncatingIfNeeded: length)
        header[3] = type.rawValue
        header[4] = flags
        header.storeBytes(of: stream.bigEndian, toByteOffset: 5, as: UInt32.self)
    }

    /// Hands the frames written so far to the channel (before each flush; see ``FlushesAnswers``).
    func writeHeld(context: ChannelHandlerContext) {
        guard let bytes = output else { return }
        output = nil
        context.write(wrapOutboundOut(bytes), promise: nil)
    }

    /// A whole header block in one HEADERS frame (this door's blocks are far below the 16 KiB every peer takes).
    private func headersFrame(_ stream: UInt32, _ block: [UInt8], endStream: Bool, context: ChannelHandlerContext) {
        emit(.headers, flags: Self.endHeaders | (endStream ? Self.endStream : 0), stream: stream, length: block.count,
             context: context) { $0.writeBytes(block) }
    }

    private func rstStream(_ stream: UInt32, _ code: ErrorCode, context: ChannelHandlerContext) {
        emit(.rstStream, flags: 0, stream: stream, length: 4, context: context) { $0.writeInteger(code.rawValue) }
    }

    private func goAwayFrame(_ code: ErrorCode, context: ChannelHandlerContext) {
        emit(.goAway, flags: 0, stream: 0, length: 8, context: context) { [highestStream] out in
            out.writeInteger(highestStream)
            out.writeInteger(code.rawValue)
        }
    }

    private func sendWindowUpdate(stream: UInt32, _ increment: Int, context: ChannelHandlerContext) {
        emit(.windowUpdate, flags: 0, stream: stream, length: 4, context: context) { $0.writeInteger(UInt32(increment)) }
    }

    /// Gives the bytes of finished calls back to the connection window, a quarter of it at a time.
    private func giveBackWindow(context: ChannelHandlerContext) {
        guard open, credit >= Self.connectionWindow / 4 else { return }
        sendWindowUpdate(stream: 0, credit, context: context)
        receiveWindow += credit
        credit = 0
    }

    /// `grpc-timeout`: up to eight digits and a unit (H, M, S, m, u, n).
    static func timeout(_ text: String) -> TimeAmount? {
        guard let unit = text.utf8.last, text.utf8.count >= 2, text.utf8.count <= 9,
              let value = Int64(text.dropLast()), value >= 0 else { return nil }
        switch unit {
        case UInt8(ascii: "H"): return .hours(value)
        case UInt8(ascii: "M"): return .minutes(value)
        case UInt8(ascii: "S"): return .seconds(value)
        case UInt8(ascii: "m"): return .milliseconds(value)
        case UInt8(ascii: "u"): return .microseconds(value)
        case UInt8(ascii: "n"): return .nanoseconds(value)
        default: return nil
        }
    }
}

extension ServeService {
    /// The handler of one connection of the gRPC door (``GRPCConnection``). `batcher` and `flusher` are the connection's
    /// event loop's (see `ServeServer`).
    func grpcConnectionHandlers(batcher: SignatureBatcher?, flusher: AnswerFlusher?) -> [any ChannelHandler] {
        [GRPCConnection(service: self, door: ExternalAuthorization(settings: settings), batcher: batcher, flusher: flusher)]
    }

    /// A connection of the gRPC door for this service, unbatched, outside a server: the benchmark harness drives it in
    /// an `EmbeddedChannel`, as it does ``httpConnectionHandler()``.
    package func grpcConnectionHandlers() -> [any ChannelHandler] { grpcConnectionHandlers(batcher: nil, flusher: nil) }
}

/// A connection's calls by stream ID: at most the 100 concurrent streams the connection allows, about as many as a
/// client keeps in flight, so a list searched from the end (the newest streams are the busiest) costs less than
/// hashing stream IDs several times a call.
private struct Calls<Call> {
    private(set) var entries: [(UInt32, Call)] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    private func index(of stream: UInt32) -> Int? {
        var index = entries.count - 1
        while index >= 0 {
            if entries[index].0 == stream { return index }
            index -= 1
        }
        return nil
    }

    subscript(stream: UInt32) -> Call? {
        get { index(of: stream).map { entries[$0].1 } }
        set {
            if let index = index(of: stream) {
                if let newValue { entries[index].1 = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((stream, newValue))
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey stream: UInt32) -> Call? {
        guard let index = index(of: stream) else { return nil }
        return entries.remove(at: index).1
    }

    mutating func removeAll() { entries.removeAll() }
}
