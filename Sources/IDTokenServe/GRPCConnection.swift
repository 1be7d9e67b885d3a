#if GRPC
import IDTokenKit
import JOSE
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One connection of `idtoken serve`'s gRPC door (`--grpc-listen`, Envoy's `ext_authz`): `Authorization/Check`, the
/// one unary method, read from the HTTP/2 frames that swift-nio-http2's ``NIOHTTP2Handler`` decodes in front of it.
/// Like Envoy's own `ext_authz` client, it is a minimal gRPC: no stream channels, no generic RPC machinery. A call's
/// frames are gathered by stream ID; its `CheckRequest` becomes the ``ServeRequest`` the HTTP door would make
/// (``ExternalAuthorization``), the service decides it as over HTTP (the ID token's signature waiting, under load, for
/// its event loop's ``SignatureBatcher`` beside the HTTP door's), and the answer is written as three frames: the
/// response headers, the message, and trailers with `grpc-status: 0` (the verdict itself is in the message).
///
/// Bounds (the door is exposed to whatever reaches the sidecar):
/// - HTTP/2 abuse is swift-nio-http2's to refuse: at most 100 concurrent streams; header lists above
///   `serve.maxHeaderBytes` (an HPACK bomb decodes to no more than that); rapid resets, CONTINUATION floods, and
///   SETTINGS, PING, PRIORITY floods beyond its rate limits end the connection with a GOAWAY; control frames a peer
///   does not read are bounded.
/// - A message is at most `2 × serve.maxHeaderBytes + 16 KiB` (a request head's worth of headers and Envoy's
///   attributes): a larger one is answered RESOURCE_EXHAUSTED and the rest of its stream dropped as it comes.
/// - Flow control: the connection's receive window is 1 MiB, and a call's bytes are given back to it only once the
///   call has been read whole (or refused), so a peer holds at most 1 MiB of unfinished calls here.
/// - A call not complete within `serve.requestTimeoutSeconds` of its headers, or past its `grpc-timeout`, is answered
///   DEADLINE_EXCEEDED; a connection with no call for `serve.idleTimeoutSeconds` is closed with a GOAWAY. The times
///   are checked by one timer per connection, as ``ServeConnection`` checks its own.
/// - Backpressure: while the answers written and not yet taken by the peer exceed the channel's high water mark, no
///   more frames are read.
/// - Shutdown (`ChannelShouldQuiesceEvent`): a GOAWAY naming the last stream taken; the calls in flight are answered,
///   then the connection closes.
final class GRPCConnection: ChannelDuplexHandler, FlushesAnswers {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The connection's receive window (HTTP/2's initial 65,535 raised to this when the connection opens).
    static let connectionWindow = 1 << 20
    /// The settings sent to the peer: 100 streams, header lists up to `maxHeaderBytes`, a stream window that holds the
    /// largest message taken.
    static func initialSettings(_ settings: ServeSettings) -> HTTP2Settings {
        [HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
         HTTP2Setting(parameter: .maxHeaderListSize, value: settings.maxHeaderBytes),
         HTTP2Setting(parameter: .initialWindowSize, value: max(65_535, maximumMessage(settings) + 1024))]
    }

    static func maximumMessage(_ settings: ServeSettings) -> Int { 2 * settings.maxHeaderBytes + 16 * 1024 }

    private struct Call {
        enum Phase {
            /// The request's bytes are arriving.
            case reading
            /// Decided or being decided; the answer is written once ready.
            case answering
            /// Refused before its end: what the peer still sends is given back to the window and dropped.
            case dropping
        }
        var phase = Phase.reading
        var message: ByteBuffer?
        /// Flow-controlled bytes received and not yet given back to the connection window.
        var held = 0
        let started: NIODeadline
        /// From `grpc-timeout`.
        let deadline: NIODeadline?
        /// Whether the peer has ended its side (END_STREAM).
        var peerDone = false
    }

    private let service: ServeService
    private let door: ExternalAuthorization
    private let batcher: SignatureBatcher?
    /// This connection's event loop's flusher, for the answers of a batch or an asynchronous wait (the answers of a
    /// read are flushed at its end).
    let flusher: AnswerFlusher?
    private let maximumMessage: Int
    private let requestTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var calls = Calls<Call>()
    private var highestStream = HTTP2StreamID(0)
    /// Bytes of finished calls to give back to the connection window.
    private var credit = 0
    var unflushed = false
    var flushQueued = false
    private var readHeld = false
    private var quiescing = false
    private var open = true
    private var lastActivity = NIODeadline.now()
    private var tick = TimeAmount.seconds(1)

    private static let responseHeaders: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]
    private static let okTrailers: HPACKHeaders = ["grpc-status": "0"]

    init(service: ServeService, door: ExternalAuthorization, batcher: SignatureBatcher?, flusher: AnswerFlusher?) {
        self.service = service
        self.door = door
        self.batcher = batcher
        self.flusher = flusher
        let settings = service.settings
        self.maximumMessage = Self.maximumMessage(settings)
        self.requestTimeout = .seconds(Int64(settings.requestTimeoutSeconds))
        self.idleTimeout = .seconds(Int64(settings.idleTimeoutSeconds))
    }

    // MARK: Lifecycle and limits

    func handlerAdded(context: ChannelHandlerContext) {
        lastActivity = context.eventLoop.now
        tick = .nanoseconds(min(1_000_000_000, max(250_000_000, min(requestTimeout.nanoseconds, idleTimeout.nanoseconds) / 4)))
        scheduleCheck(context: context)
        if context.channel.isActive { opened(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        // NIOHTTP2Handler, in front, has sent the preface and settings on this event.
        opened(context: context)
        context.fireChannelActive()
    }

    private var windowRaised = false

    private func opened(context: ChannelHandlerContext) {
        guard !windowRaised else { return }
        windowRaised = true
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream,
                                                         payload: .windowUpdate(windowSizeIncrement: Self.connectionWindow - 65_535))),
                              promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        open = false
        calls.removeAll()
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
            if now - lastActivity >= idleTimeout { goAwayAndClose(context: context) }
            return
        }
        var expired: [HTTP2StreamID] = []
        for (stream, call) in calls.entries where call.phase != .dropping {
            if let deadline = call.deadline, now >= deadline {
                expired.append(stream)
            } else if call.phase == .reading && now - call.started >= requestTimeout {
                expired.append(stream)
            }
        }
        for stream in expired {
            service.metrics.countRequestTimeout()
            fail(stream, .deadlineExceeded, "the call was not answered within its deadline (its grpc-timeout; serve.requestTimeoutSeconds to send its request)",
                 context: context)
        }
        flushIfNeeded(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The event's type compared first: a failed `as?` from `Any` costs a runtime cast, and NIOHTTP2Handler sends
        // several events a call (stream created, window updated, stream closed).
        let type = ObjectIdentifier(Swift.type(of: event))
        if type == ObjectIdentifier(StreamClosedEvent.self), let closed = event as? StreamClosedEvent {
            if let call = calls.removeValue(forKey: closed.streamID) { credit += call.held }
            giveBackWindow(context: context)
            closeIfQuiesced(context: context)
        } else if type == ObjectIdentifier(ChannelShouldQuiesceEvent.self) {
            quiescing = true
            context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream,
                                                             payload: .goAway(lastStreamID: highestStream, errorCode: .noError, opaqueData: nil))),
                                  promise: nil)
            closeIfQuiesced(context: context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2Handler has sent its GOAWAY for a connection error; a stream error only resets that stream.
        if error is NIOHTTP2Errors.StreamClosed || error is NIOHTTP2Errors.NoSuchStream { return }
        open = false
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable || !open { context.read() } else { readHeld = true }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable && readHeld {
            readHeld = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }

    private func closeIfQuiesced(context: ChannelHandlerContext) {
        guard quiescing, open, calls.isEmpty else { return }
        open = false
        let channel = context.channel
        // Written after every answer, so its completion means they are all with the kernel.
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream,
                                                         payload: .goAway(lastStreamID: highestStream, errorCode: .noError, opaqueData: nil))))
            .whenComplete { _ in channel.close(promise: nil) }
    }

    private func goAwayAndClose(context: ChannelHandlerContext) {
        guard open else { return }
        open = false
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: .rootStream,
                                                         payload: .goAway(lastStreamID: highestStream, errorCode: .noError, opaqueData: nil))))
            .whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: Calls

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let stream = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            if var call = calls[stream] {
                // Trailers from the peer end its side.
                guard headers.endStream, Self.isWellFormed(headers.headers, trailers: true) else {
                    malformed(stream, context: context)
                    return
                }
                call.peerDone = true
                calls[stream] = call
                if call.phase == .reading { complete(stream, context: context) }
                return
            }
            guard open else { return }
            if stream > highestStream { highestStream = stream }
            begin(stream, headers: headers.headers, ended: headers.endStream, context: context)
        case .data(let payload):
            let length = payload.data.readableBytes + (payload.paddingBytes.map { $0 + 1 } ?? 0)
            guard var call = calls[stream] else {
                credit += length
                giveBackWindow(context: context)
                return
            }
            if payload.endStream { call.peerDone = true }
            switch call.phase {
            case .reading:
                call.held += length
                guard case .byteBuffer(var bytes) = payload.data,
                      (call.message?.readableBytes ?? 0) + bytes.readableBytes <= maximumMessage + 5 else {
                    calls[stream] = call
                    fail(stream, .resourceExhausted, "the CheckRequest is larger than \(maximumMessage) bytes", context: context)
                    return
                }
                if call.message == nil { call.message = bytes } else { call.message!.writeBuffer(&bytes) }
                calls[stream] = call
                if call.peerDone { complete(stream, context: context) }
            case .answering, .dropping:
                credit += length
                calls[stream] = call
                giveBackWindow(context: context)
            }
        case .rstStream:
            if let call = calls.removeValue(forKey: stream) { credit += call.held }
            giveBackWindow(context: context)
            closeIfQuiesced(context: context)
        default:
            // Settings, pings, window updates, priorities, GOAWAY: NIOHTTP2Handler's.
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Once a read cycle (settings, pings and window updates count: the peer is there).
        lastActivity = context.eventLoop.now
        // At once: a connection carries many calls, whose answers of this read leave together already; holding them
        // for the other connections' reads would only add to their latency (measured: no CPU saved).
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    /// A call's headers: the method, the content type, the deadline, read in the pass that checks the block.
    private func begin(_ stream: HTTP2StreamID, headers: HPACKHeaders, ended: Bool, context: ChannelHandlerContext) {
        var head = RequestHead()
        guard Self.isWellFormed(headers, trailers: false, reading: &head) else {
            write(HTTP2Frame(streamID: stream, payload: .rstStream(.protocolError)), context: context)
            return
        }
        let now = context.eventLoop.now
        calls[stream] = Call(started: now, deadline: head.timeout.map { now + $0 }, peerDone: ended)
        guard head.isPOST, head.isCheck else {
            fail(stream, .unimplemented, "this service answers \(ExternalAuthorization.checkMethod) only", context: context)
            return
        }
        guard head.isGRPC else {
            calls[stream]!.phase = .dropping
            let answer: HPACKHeaders = [":status": "415", "content-type": "text/plain"]
            write(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: answer, endStream: true))), context: context)
            finished(stream, context: context)
            return
        }
        if ended { complete(stream, context: context) }
    }

    /// A malformed header block on a call's stream: the stream is reset (PROTOCOL_ERROR), the call dropped.
    private func malformed(_ stream: HTTP2StreamID, context: ChannelHandlerContext) {
        if let call = calls.removeValue(forKey: stream) { credit += call.held }
        write(HTTP2Frame(streamID: stream, payload: .rstStream(.protocolError)), context: context)
        giveBackWindow(context: context)
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
    /// (`te` only as `trailers`); no value with NUL, CR or LF, or with whitespace at either end. What the call needs
    /// is read in the same pass, on the bytes in place (`head`; trailers give nothing).
    static func isWellFormed(_ headers: HPACKHeaders, trailers: Bool, reading head: inout RequestHead) -> Bool {
        var pseudo: UInt8 = 0
        var regular = false
        for (name, value, _) in headers {
            var name = name, value = value
            let wellFormed = name.withUTF8 { name in
                value.withUTF8 { value in
                    field(name, value, trailers: trailers, pseudo: &pseudo, regular: &regular, head: &head)
                }
            }
            guard wellFormed else { return false }
        }
        return trailers || pseudo & 7 == 7
    }

    static func isWellFormed(_ headers: HPACKHeaders, trailers: Bool) -> Bool {
        var head = RequestHead()
        return isWellFormed(headers, trailers: trailers, reading: &head)
    }

    /// One field of ``isWellFormed(_:trailers:reading:)``.
    private static func field(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>, trailers: Bool,
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
            head.isGRPC = value.count >= 16 && equals(UnsafeBufferPointer(rebasing: value[0..<16]), grpc)
        case 12 where equals(name, "grpc-timeout"):
            head.timeout = timeout(String(decoding: value, as: UTF8.self))
        default: break
        }
        return true
    }

    /// Whether `bytes` are `literal`'s, exactly.
    @inline(__always)
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount
            && ByteSearch.equal(UnsafeRawBufferPointer(bytes), UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inline(__always)
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ other: [UInt8]) -> Bool {
        bytes.count == other.count && other.withUnsafeBytes { ByteSearch.equal(UnsafeRawBufferPointer(bytes), $0) }
    }

    /// RFC 9110's `tchar`, upper-case letters excluded (HTTP/2 field names are lower-case).
    @inline(__always)
    private static func isLowerCaseTokenByte(_ byte: UInt8) -> Bool {
        // Two 64-bit masks, one bit a byte below 0x80: `!#$%&'*+-.^_`|~`, the digits and the lower-case letters.
        let low: UInt64 = 0x03FF_6CFA_0000_0000, high: UInt64 = 0x57FF_FFFF_C000_0000
        return byte < 64 ? low >> byte & 1 == 1 : byte < 128 && high >> (byte - 64) & 1 == 1
    }

    /// The call's message is whole: decide it.
    private func complete(_ stream: HTTP2StreamID, context: ChannelHandlerContext) {
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
    private func decided(_ decision: ServeDecision, stream: HTTP2StreamID, started: NIODeadline, context: ChannelHandlerContext) {
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
                decided(then(pending.finish(signatureValid: pending.jws.verifySignature(with: pending.key))), stream: stream,
                        started: started, context: context)
                return
            }
            batcher.add(pending) { [self] valid in
                decided(then(pending.finish(signatureValid: valid)), stream: stream, started: started, context: context)
                flushSoon(context: context)
            }
        }
    }

    /// The call's answer: response headers, the `CheckResponse`, trailers with `grpc-status: 0`.
    private func answer(_ response: ServeResponse, stream: HTTP2StreamID, started: NIODeadline, context: ChannelHandlerContext) {
        guard open, calls[stream]?.phase == .answering else { return }
        if let slot = response.slot {
            service.metrics.record(slot: slot, nanoseconds: NIODeadline.now().uptimeNanoseconds &- started.uptimeNanoseconds)
        }
        var message = context.channel.allocator.buffer(capacity: 256 + response.body.utf8.count)
        door.writeCheckResponse(response, to: &message)
        write(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: Self.responseHeaders))), context: context)
        write(HTTP2Frame(streamID: stream, payload: .data(.init(data: .byteBuffer(message)))), context: context)
        write(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: Self.okTrailers, endStream: true))), context: context)
        finished(stream, context: context)
    }

    /// Ends a call with a gRPC error status (a trailers-only response).
    private func fail(_ stream: HTTP2StreamID, _ status: ExternalAuthorization.GRPCStatus, _ message: String,
                      context: ChannelHandlerContext) {
        guard var call = calls[stream], call.phase != .dropping else { return }
        credit += call.held
        call.held = 0
        call.message = nil
        call.phase = .dropping
        calls[stream] = call
        giveBackWindow(context: context)
        let trailers: HPACKHeaders = [":status": "200", "content-type": "application/grpc",
                                      "grpc-status": String(status.rawValue),
                                      // grpc-message is percent-encoded: IdentityHeaders.encode writes `%XX` for `%`, `,` and every byte outside printable ASCII.
                                      "grpc-message": IdentityHeaders.encode(message)]
        write(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: trailers, endStream: true))), context: context)
        finished(stream, context: context)
    }

    /// After the last frame of an answer: a peer that has not ended its side is told to stop (RST_STREAM NO_ERROR,
    /// as gRPC servers do), so that the stream does not hold one of the connection's 100.
    private func finished(_ stream: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let call = calls.removeValue(forKey: stream) else { return }
        credit += call.held
        if !call.peerDone {
            write(HTTP2Frame(streamID: stream, payload: .rstStream(.noError)), context: context)
        }
        giveBackWindow(context: context)
        closeIfQuiesced(context: context)
    }

    private func write(_ frame: HTTP2Frame, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(frame), promise: nil)
        unflushed = true
    }

    /// Gives the bytes of finished calls back to the connection window, a quarter of it at a time.
    private func giveBackWindow(context: ChannelHandlerContext) {
        guard open, credit >= Self.connectionWindow / 4 else { return }
        write(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: credit)), context: context)
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
    /// The handlers of one connection of the gRPC door, in pipeline order: swift-nio-http2's frame handler, configured
    /// for this door, then ``GRPCConnection``. `batcher` and `flusher` are the connection's event loop's (see
    /// `ServeServer`).
    func grpcConnectionHandlers(batcher: SignatureBatcher?, flusher: AnswerFlusher?) -> [any ChannelHandler] {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = GRPCConnection.initialSettings(settings)
        // The request's header block is checked by GRPCConnection itself (RFC 9113 §8.2, §8.3), in the pass that reads
        // it; its own answers are constant header blocks. Content-Length is not used by gRPC: the message's own length
        // prefix is checked against what arrived.
        connection.headerBlockValidation = .disabled
        connection.contentLengthValidation = .disabled
        return [NIOHTTP2Handler(mode: .server, connectionConfiguration: connection),
                GRPCConnection(service: self, door: ExternalAuthorization(settings: settings), batcher: batcher, flusher: flusher)]
    }

    /// A connection of the gRPC door for this service, unbatched, outside a server: the benchmark harness drives it in
    /// an `EmbeddedChannel`, as it does ``httpConnectionHandler()``.
    package func grpcConnectionHandlers() -> [any ChannelHandler] { grpcConnectionHandlers(batcher: nil, flusher: nil) }
}

/// A connection's calls by stream ID: at most the 100 concurrent streams the connection allows, about as many as a
/// client keeps in flight, so a list searched from the end (the newest streams are the busiest) costs less than
/// hashing stream IDs several times a call.
private struct Calls<Call> {
    private(set) var entries: [(HTTP2StreamID, Call)] = []

    var isEmpty: Bool { entries.isEmpty }

    private func index(of stream: HTTP2StreamID) -> Int? {
        var index = entries.count - 1
        while index >= 0 {
            if entries[index].0 == stream { return index }
            index -= 1
        }
        return nil
    }

    subscript(stream: HTTP2StreamID) -> Call? {
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
    mutating func removeValue(forKey stream: HTTP2StreamID) -> Call? {
        guard let index = index(of: stream) else { return nil }
        return entries.remove(at: index).1
    }

    mutating func removeAll() { entries.removeAll() }
}
#endif
