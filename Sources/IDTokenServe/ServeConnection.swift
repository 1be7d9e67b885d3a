import NIOCore
import IDTokenKit

/// One connection of `idtoken serve`: reads request heads from the bytes received (``HTTPRequestParser``),
/// answers each through ``ServeService``, in order, and writes the answers as bytes. It is the whole pipeline:
/// the service needs four header fields of a request and no body, so a general HTTP decoder and encoder (header
/// collections of `String`s built and read back per request) would be most of a request's cost.
///
/// - Keep-alive and pipelining: requests that arrive together are answered in order; while an answer waits (a
///   key fetch, Redis) no further request is read from the socket, so a client cannot make the service buffer
///   without bound.
/// - Backpressure: while the answers written and not yet taken by the client exceed the channel's high water mark
///   (`ServeServer` sets 64 KiB), no further request is answered or read; reading resumes when the client has
///   taken them down to the low mark. A client that pipelines requests and never reads its answers stalls only
///   itself, holds at most the water mark and one read's bytes, and is closed by the idle timeout.
/// - Limits: a head (and the body it declares) larger than `maxHeaderBytes` is answered 431 (413) and the
///   connection closed; a head not complete within `requestTimeoutSeconds` of its first byte is answered 408; a
///   body (skipped, never kept) not complete within `requestTimeoutSeconds` of its request's first byte closes the
///   connection, whatever the pace of its bytes; a connection with nothing to do for `idleTimeoutSeconds` (a
///   stalled reader of its answers included) is closed. The times are checked by one timer per connection (every
///   quarter of the shorter limit, between 250 ms and 1 s, so that a limit is enforced within a second): a
///   request only reads the clock. The timer is a one-shot task that schedules the next check itself and is never
///   cancelled: cancelling a scheduled task makes NIO search its event loop's whole timer heap, so 10,000
///   connections closing together would cost 10,000 × 10,000 steps and stall every loop. A closed connection just
///   lets its last check lapse.
/// - Closing after an answer (`Connection: close`, a refused request, shutdown) is a lingering close: the answer
///   is flushed, the write side shut (FIN), and whatever the client still sends is read and dropped until it
///   closes too, for at most ``lingerTime``. Closing a socket with unread bytes in it (pipelined requests) makes
///   the kernel answer with a reset, which can destroy an answer the client has not read yet.
/// - Shutdown (`ChannelShouldQuiesceEvent`): an idle connection closes at once; one answering a request closes
///   after writing that answer, with `Connection: close`.
final class ServeConnection: ChannelDuplexHandler, FlushesAnswers {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let service: ServeService
    private let parser: HTTPRequestParser
    private let requestTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    /// This connection's event loop's batch of signatures, when the service verifies them together.
    private let batcher: SignatureBatcher?
    /// This connection's event loop's flushes, done once the loop's cycle of reads is handled; nil outside a server
    /// (flushed at once).
    let flusher: AnswerFlusher?
    // The connection's state is used on its event loop only, one handler call at a time: its accesses need no
    // run-time exclusivity check (about 90 instructions each, several a request).
    /// Where the connection stands (``ServeConnectionPhase``).
    @exclusivity(unchecked) private(set) var phase = ServeConnectionPhase.idle
    /// Bytes received and not yet consumed.
    @exclusivity(unchecked) private var buffered: ByteBuffer?
    /// A `read` asked for while the connection may not read, to pass on when it may.
    @exclusivity(unchecked) private var readHeld = false
    /// Answers were written and not flushed yet.
    @exclusivity(unchecked) var unflushed = false
    /// The loop's flusher will flush this connection.
    @exclusivity(unchecked) var flushQueued = false
    @exclusivity(unchecked) private var lastActivity: NIODeadline
    @exclusivity(unchecked) private var tick = TimeAmount.seconds(1)
    /// How long a lingering close waits for the client to close its side.
    static let lingerTime = TimeAmount.seconds(2)

    init(service: ServeService, batcher: SignatureBatcher? = nil, flusher: AnswerFlusher? = nil, now: NIODeadline = .now()) {
        self.service = service
        self.batcher = batcher
        self.flusher = flusher
        let settings = service.settings
        self.parser = HTTPRequestParser(limit: settings.maxHeaderBytes, nonceHeader: settings.nonceHeader,
                                        appCheckHeader: settings.appCheckProfile == nil ? nil : settings.appCheckHeader)
        self.requestTimeout = .seconds(Int64(settings.requestTimeoutSeconds))
        self.idleTimeout = .seconds(Int64(settings.idleTimeoutSeconds))
        self.lastActivity = now
    }

    // MARK: Lifecycle and limits

    func handlerAdded(context: ChannelHandlerContext) {
        lastActivity = context.eventLoop.now
        tick = .nanoseconds(min(1_000_000_000, max(250_000_000, min(requestTimeout.nanoseconds, idleTimeout.nanoseconds) / 4)))
        scheduleCheck(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        phase = .closed
    }

    private func scheduleCheck(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: tick) {
            let (handler, context) = loopBound.value
            guard handler.phase.isOpen else { return }
            handler.check(context: context)
            if handler.phase.isOpen { handler.scheduleCheck(context: context) }
        }
    }

    private func check(context: ChannelHandlerContext) {
        switch phase.timeout(now: context.eventLoop.now, lastActivity: lastActivity, requestTimeout: requestTimeout,
                             idleTimeout: idleTimeout) {
        case .none:
            break
        case .requestTimeout:
            service.metrics.countRequestTimeout()
            refuse(status: 408, context: context)
        case .close:
            close(context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            switch phase.onQuiesce {
            case .closeNow:
                // Between answers: close lingering, so that answers the client has not read yet still reach it.
                finish(after: nil, context: context)
            case .closeAfterAnswer:
                if case .answering(let remaining, let since, _) = phase { phase = .answering(remaining: remaining, since: since, closing: true) }
            case .nothing:
                break
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(context: context)
    }

    func read(context: ChannelHandlerContext) {
        if phase.mayRead(writable: context.channel.isWritable) { context.read() } else { readHeld = true }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable && phase.isOpen {
            // The client took its answers: answer what is buffered, then read again.
            lastActivity = context.eventLoop.now
            process(context: context)
            flushIfNeeded(context: context)
            resumeReading(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    private func resumeReading(context: ChannelHandlerContext) {
        if readHeld && phase.mayRead(writable: context.channel.isWritable) {
            readHeld = false
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        phase = .closed
        context.fireChannelInactive()
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Lingering after the last answer, or closing: what the client still sends is dropped as it comes.
        guard phase.isOpen else { return }
        var incoming = unwrapInboundIn(data)
        lastActivity = context.eventLoop.now
        if buffered == nil {
            buffered = incoming
        } else {
            buffered!.writeBuffer(&incoming)
        }
        process(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushSoon(context: context)
        context.fireChannelReadComplete()
    }

    /// Answers the complete requests buffered, in order, until one has to wait or the client stops taking answers.
    private func process(context: ChannelHandlerContext) {
        while context.channel.isWritable, var buffer = buffered {
            switch phase {
            case .answering, .lingering, .closed: return
            case .idle, .head, .body: break
            }
            buffered = nil
            if case .body(let remaining, let since) = phase {
                let skipped = min(remaining, buffer.readableBytes)
                buffer.moveReaderIndex(forwardBy: skipped)
                phase = remaining == skipped ? .idle : .body(remaining: remaining - skipped, since: since)
            }
            guard buffer.readableBytes > 0 else { return }
            if case .body = phase { return }
            let result = buffer.withUnsafeReadableBytes { parser.parse($0, lendingBearerToken: true) }
            // Consumed: the head's request is moved out of the result, not copied (a retain and a release of each of
            // its strings).
            switch consume result {
            case .incomplete:
                if case .idle = phase { phase = .head(since: lastActivity) }
                if buffer.readerIndex > 0 { buffer.discardReadBytes() }
                buffered = buffer
                return
            case .refused(let refusal):
                if refusal == .headTooLarge { service.metrics.countHeaderTooLarge() }
                refuse(status: refusal.status, context: context)
                return
            case .head(let head):
                var started = lastActivity
                if case .head(let since) = phase { started = since }
                // Decided while the buffer still holds the head: the bearer token's bytes are lent to the decision.
                let decision = buffer.withUnsafeReadableBytes { bytes in
                    service.decide(head.request, batching: batcher != nil,
                                   lentBearerToken: head.bearerRange.map { TokenBytes(UnsafeRawBufferPointer(rebasing: bytes[$0])) })
                }
                buffer.moveReaderIndex(forwardBy: head.length)
                let body = min(head.bodyLength, buffer.readableBytes)
                buffer.moveReaderIndex(forwardBy: body)
                let remaining = head.bodyLength - body
                phase = remaining > 0 ? .body(remaining: remaining, since: started) : .idle
                if buffer.readableBytes > 0 && !head.chunked { buffered = buffer }
                // The time the request's bytes were read (one clock read a read, not one a request).
                decided(decision, head: head, started: lastActivity, context: context)
            }
        }
    }

    /// Writes the answer now, or stops reading until it is ready: after an asynchronous wait, or once the token's
    /// signature has been verified with the others of this event-loop cycle (``SignatureBatcher``).
    private func decided(_ decision: ServeDecision, head: HTTPRequestParser.Head, started: NIODeadline, context: ChannelHandlerContext) {
        switch decision {
        case .now(let response):
            if case .answering = phase {
                completed(response, for: head, started: started, context: context)
            } else {
                write(response, for: head, started: started, closing: false, context: context)
            }
        case .later(let work):
            waitForAnswer(context: context)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.makeFutureWithTask { await work() }.whenSuccess { response in
                let (handler, context) = loopBound.value
                handler.completed(response, for: head, started: started, context: context)
            }
        case .signature(let pending, let then):
            guard let batcher, batcher.defers() else {
                decided(then(pending.finish(signatureValid: pending.verifySignature())), head: head,
                        started: started, context: context)
                return
            }
            waitForAnswer(context: context)
            batcher.add(pending) { [self] valid in
                guard case .answering = phase else { return }
                decided(then(pending.finish(signatureValid: valid)), head: head, started: started, context: context)
            }
        }
    }

    /// No request is read or answered on this connection until ``completed(_:for:started:context:)``.
    private func waitForAnswer(context: ChannelHandlerContext) {
        if case .answering = phase { return }
        switch phase {
        case .body(let remaining, let since): phase = .answering(remaining: remaining, since: since, closing: false)
        default: phase = .answering(remaining: 0, since: context.eventLoop.now, closing: false)
        }
    }

    /// Writes an answer that was waited for, then goes on with the requests buffered behind it.
    private func completed(_ response: ServeResponse, for head: HTTPRequestParser.Head, started: NIODeadline,
                           context: ChannelHandlerContext) {
        guard case .answering(let remaining, let since, let closing) = phase else { return }
        phase = remaining > 0 ? .body(remaining: remaining, since: since) : .idle
        write(response, for: head, started: started, closing: closing, context: context)
        process(context: context)
        flushSoon(context: context)
        resumeReading(context: context)
    }

    /// Writes `response` as HTTP/1.1 bytes; closes after it when the request or a shutdown (`closing`) says so.
    private func write(_ response: ServeResponse, for head: HTTPRequestParser.Head, started: NIODeadline, closing: Bool,
                       context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        if let slot = response.slot {
            service.metrics.record(slot: slot, nanoseconds: now.uptimeNanoseconds &- started.uptimeNanoseconds)
        }
        let keepAlive = head.keepAlive && !closing
        let sendsBody = !head.isHEAD && !response.body.isEmpty
        let status = Self.statusLine(response.status)
        // Most answers have no body (every allow and refusal of /verify): their length needs no formatting.
        let length = response.body.isEmpty ? "0" : String(response.body.utf8.count)
        let ending: StaticString = !keepAlive ? "\r\nConnection: close\r\n\r\n"
            : head.isHTTP10 ? "\r\nConnection: keep-alive\r\n\r\n" : "\r\n\r\n"
        // The exact size first, then the bytes in one write: the identity headers as they were laid out when the token
        // was first answered, then the headers IdentityHeaders.isSafe passes (at most 64 of them; an answer has a few).
        let identity = response.identity
        var size = 9 + status.utf8CodeUnitCount + 16 + length.utf8.count + ending.utf8CodeUnitCount
            + (sendsBody ? response.body.utf8.count : 0) + (identity?.http.count ?? 0)
        let sent = response.sentHeaders
        response.forEachHeader(in: sent) { _, name, value in size += name.utf8.count + value.utf8.count + 4 }
        var out = context.channel.allocator.buffer(capacity: size)
        out.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { buffer in
            var writer = ByteWriter(buffer: buffer)
            writer.text("HTTP/1.1 ")
            writer.text(status)
            if let identity { writer.bytes(identity.http) }
            response.forEachHeader(in: sent) { _, name, value in
                writer.text(name)
                writer.text(": ")
                writer.text(value)
                writer.text("\r\n")
            }
            writer.text("Content-Length: ")
            writer.text(length)
            writer.text(ending)
            if sendsBody { writer.text(response.body) }
            return writer.at
        }
        lastActivity = now
        if keepAlive {
            context.write(wrapOutboundOut(out), promise: nil)
            unflushed = true
        } else {
            finish(after: out, context: context)
        }
    }

    /// Answers `status` to a request that is not taken, and closes.
    private func refuse(status: Int, context: ChannelHandlerContext) {
        guard phase.isOpen else { return }
        var out = context.channel.allocator.buffer(capacity: 128)
        out.writeStaticString("HTTP/1.1 ")
        out.writeStaticString(Self.statusLine(status))
        out.writeStaticString("Content-Length: 0\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n")
        finish(after: out, context: context)
    }

    /// Writes the last answer (if any) and closes lingering: the answers are flushed and the write side shut, then
    /// input is dropped until the client closes, for at most ``lingerTime``. A socket closed with unread bytes in it
    /// (pipelined requests) would make the kernel answer with a reset, which can destroy answers the client has not
    /// read yet.
    private func finish(after last: ByteBuffer?, context: ChannelHandlerContext) {
        guard phase.isOpen else { return }
        phase = .lingering
        unflushed = false
        buffered = nil
        let channel = context.channel
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        // Written in order after every earlier answer, so its completion means they are all with the kernel.
        context.writeAndFlush(wrapOutboundOut(last ?? channel.allocator.buffer(capacity: 0))).whenComplete { written in
            guard case .success = written else { return channel.close(promise: nil) }
            let (handler, context) = loopBound.value
            // A half-close the transport cannot do is a plain close.
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
            handler.readHeld = false
            context.read()
            context.eventLoop.scheduleTask(in: Self.lingerTime) { channel.close(promise: nil) }
        }
    }

    private func close(context: ChannelHandlerContext) {
        guard phase.isOpen else { return }
        phase = .closed
        buffered = nil
        flushIfNeeded(context: context)
        context.close(promise: nil)
    }

    /// The status code and reason phrase, with the line's CRLF.
    private static func statusLine(_ status: Int) -> StaticString {
        switch status {
        case 200: "200 OK\r\n"
        case 400: "400 Bad Request\r\n"
        case 401: "401 Unauthorized\r\n"
        case 403: "403 Forbidden\r\n"
        case 404: "404 Not Found\r\n"
        case 408: "408 Request Timeout\r\n"
        case 413: "413 Content Too Large\r\n"
        case 431: "431 Request Header Fields Too Large\r\n"
        case 503: "503 Service Unavailable\r\n"
        case 505: "505 HTTP Version Not Supported\r\n"
        default: "500 Internal Server Error\r\n"
        }
    }
}

extension ServeService {
    /// A connection of the HTTP door for this service, unbatched, outside a server: the benchmark harness drives it in
    /// an `EmbeddedChannel`.
    package func httpConnectionHandler() -> any ChannelHandler { ServeConnection(service: self) }
}
