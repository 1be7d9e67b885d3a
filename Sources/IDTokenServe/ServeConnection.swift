import NIOCore

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
final class ServeConnection: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let service: ServeService
    private let parser: HTTPRequestParser
    private let requestTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    /// Bytes received and not yet consumed.
    private var buffered: ByteBuffer?
    /// Body bytes of the last request still to be skipped.
    private var skipping = 0
    /// An answer is being worked out off the event loop; nothing more is read or parsed until it is written.
    private var waiting = false
    /// A `read` asked for while waiting, to pass on when the answer is written.
    private var readHeld = false
    /// Answers were written and not flushed yet.
    private var unflushed = false
    /// Close after the answer being written (shutdown, a chunked body, `Connection: close`).
    private var closeAfterAnswer = false
    /// Closing or closed: nothing more is parsed or answered.
    private var done = false
    /// When the bytes of the head not yet complete began arriving, if some have.
    private var headStartedAt: NIODeadline?
    /// When the request whose body is being skipped began arriving.
    private var bodyStartedAt: NIODeadline?
    /// The answers are written and the write side shut: input is dropped until the client closes, or the linger
    /// time runs out.
    private var lingering = false
    /// How long a lingering close waits for the client to close its side.
    static let lingerTime = TimeAmount.seconds(2)
    private var lastActivity = NIODeadline.now()
    private var tick = TimeAmount.seconds(1)

    init(service: ServeService) {
        self.service = service
        let settings = service.settings
        self.parser = HTTPRequestParser(limit: settings.maxHeaderBytes, nonceHeader: settings.nonceHeader)
        self.requestTimeout = .seconds(Int64(settings.requestTimeoutSeconds))
        self.idleTimeout = .seconds(Int64(settings.idleTimeoutSeconds))
    }

    // MARK: Lifecycle and limits

    func handlerAdded(context: ChannelHandlerContext) {
        tick = .nanoseconds(min(1_000_000_000, max(250_000_000, min(requestTimeout.nanoseconds, idleTimeout.nanoseconds) / 4)))
        scheduleCheck(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        done = true
    }

    private func scheduleCheck(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: tick) {
            let (handler, context) = loopBound.value
            guard !handler.done else { return }
            handler.check(context: context)
            if !handler.done { handler.scheduleCheck(context: context) }
        }
    }

    private func check(context: ChannelHandlerContext) {
        guard !done, !waiting else { return }
        let now = NIODeadline.now()
        if let started = headStartedAt, now - started >= requestTimeout {
            service.metrics.countRequestTimeout()
            refuse(status: 408, context: context)
        } else if skipping > 0, let started = bodyStartedAt, now - started >= requestTimeout {
            // A body declared and not sent in time (however steadily its bytes trickle in): the request was
            // answered; the connection cannot be reused.
            close(context: context)
        } else if headStartedAt == nil && skipping == 0 && now - lastActivity >= idleTimeout {
            close(context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            // Between answers: close lingering, so that answers the client has not read yet still reach it.
            if waiting { closeAfterAnswer = true } else { finish(after: nil, context: context) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(context: context)
    }

    func read(context: ChannelHandlerContext) {
        // Lingering: keep reading (and dropping) until the client closes.
        if lingering || (!waiting && context.channel.isWritable) { context.read() } else { readHeld = true }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable && !done {
            // The client took its answers: answer what is buffered, then read again.
            lastActivity = .now()
            process(context: context)
            flushIfNeeded(context: context)
            resumeReading(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    private func resumeReading(context: ChannelHandlerContext) {
        if readHeld && !waiting && context.channel.isWritable {
            readHeld = false
            context.read()
        }
    }

    // MARK: Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Closing, or lingering after the last answer: what the client still sends is dropped as it comes.
        guard !done else { return }
        var incoming = unwrapInboundIn(data)
        lastActivity = .now()
        if buffered == nil {
            buffered = incoming
        } else {
            buffered!.writeBuffer(&incoming)
        }
        process(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    /// Answers the complete requests buffered, in order, until one has to wait.
    private func process(context: ChannelHandlerContext) {
        while !done && !waiting && context.channel.isWritable, var buffer = buffered {
            buffered = nil
            if skipping > 0 {
                let skipped = min(skipping, buffer.readableBytes)
                buffer.moveReaderIndex(forwardBy: skipped)
                skipping -= skipped
                if skipping == 0 { bodyStartedAt = nil }
            }
            guard buffer.readableBytes > 0 else { return }
            let result = buffer.withUnsafeReadableBytes { parser.parse($0) }
            switch result {
            case .incomplete:
                if headStartedAt == nil { headStartedAt = lastActivity }
                if buffer.readerIndex > 0 { buffer.discardReadBytes() }
                buffered = buffer
                return
            case .refused(let refusal):
                if refusal == .headTooLarge { service.metrics.countHeaderTooLarge() }
                refuse(status: refusal.status, context: context)
                return
            case .head(let head):
                let started = headStartedAt ?? lastActivity
                headStartedAt = nil
                buffer.moveReaderIndex(forwardBy: head.length)
                let body = min(head.bodyLength, buffer.readableBytes)
                buffer.moveReaderIndex(forwardBy: body)
                skipping = head.bodyLength - body
                bodyStartedAt = skipping > 0 ? started : nil
                if buffer.readableBytes > 0 && !head.chunked { buffered = buffer }
                answer(head, context: context)
            }
        }
    }

    private func answer(_ head: HTTPRequestParser.Head, context: ChannelHandlerContext) {
        let started = NIODeadline.now()
        switch service.decide(head.request) {
        case .now(let response):
            write(response, for: head, started: started, context: context)
        case .later(let work):
            waiting = true
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.makeFutureWithTask { await work() }.whenSuccess { response in
                let (handler, context) = loopBound.value
                handler.waiting = false
                guard !handler.done else { return }
                handler.write(response, for: head, started: started, context: context)
                handler.flushIfNeeded(context: context)
                handler.process(context: context)
                handler.resumeReading(context: context)
            }
        }
    }

    /// Writes `response` as HTTP/1.1 bytes; closes after it when the request or the service says so.
    private func write(_ response: ServeResponse, for head: HTTPRequestParser.Head, started: NIODeadline, context: ChannelHandlerContext) {
        if let slot = response.slot {
            service.metrics.record(slot: slot, nanoseconds: NIODeadline.now().uptimeNanoseconds &- started.uptimeNanoseconds)
        }
        let keepAlive = head.keepAlive && !closeAfterAnswer
        let sendsBody = !head.isHEAD && !response.body.isEmpty
        var size = 96 + response.body.utf8.count
        for (name, value) in response.headers { size += name.utf8.count + value.utf8.count + 4 }
        var out = context.channel.allocator.buffer(capacity: size)
        out.writeStaticString("HTTP/1.1 ")
        out.writeStaticString(Self.statusLine(response.status))
        for (name, value) in response.headers where IdentityHeaders.isSafe(value) {
            out.writeString(name)
            out.writeStaticString(": ")
            out.writeString(value)
            out.writeStaticString("\r\n")
        }
        out.writeStaticString("Content-Length: ")
        out.writeString(String(response.body.utf8.count))
        if !keepAlive {
            out.writeStaticString("\r\nConnection: close\r\n\r\n")
        } else if head.isHTTP10 {
            out.writeStaticString("\r\nConnection: keep-alive\r\n\r\n")
        } else {
            out.writeStaticString("\r\n\r\n")
        }
        if sendsBody { out.writeString(response.body) }
        lastActivity = .now()
        if keepAlive {
            context.write(wrapOutboundOut(out), promise: nil)
            unflushed = true
        } else {
            finish(after: out, context: context)
        }
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
    }

    /// Answers `status` to a request that is not taken, and closes.
    private func refuse(status: Int, context: ChannelHandlerContext) {
        guard !done else { return }
        var out = context.channel.allocator.buffer(capacity: 128)
        out.writeStaticString("HTTP/1.1 ")
        out.writeStaticString(Self.statusLine(status))
        out.writeStaticString("Content-Length: 0\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n")
        finish(after: out, context: context)
    }

    /// Writes the last answer and closes lingering: the answer is flushed and the write side shut, then input is
    /// dropped until the client closes, for at most ``lingerTime``.
    private func finish(after last: ByteBuffer?, context: ChannelHandlerContext) {
        guard !done else { return }
        unflushed = false
        done = true
        lingering = true
        buffered = nil
        skipping = 0
        let channel = context.channel
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        // Written in order after every earlier answer, so its completion means they are all with the kernel.
        context.writeAndFlush(wrapOutboundOut(last ?? context.channel.allocator.buffer(capacity: 0))).whenComplete { written in
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
        guard !done else { return }
        done = true
        buffered = nil
        flushIfNeeded(context: context)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done = true
        context.fireChannelInactive()
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
