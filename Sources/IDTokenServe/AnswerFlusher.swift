import NIOCore

/// A connection whose written answers are flushed at once, or by its loop's ``AnswerFlusher`` with the cycle's others.
protocol FlushesAnswers: AnyObject {
    /// The connection's event loop's flusher; nil outside a server (an embedded channel): flushed at once.
    var flusher: AnswerFlusher? { get }
    /// Answers were written and not flushed yet.
    var unflushed: Bool { get set }
    /// The loop's flusher will flush this connection.
    var flushQueued: Bool { get set }
    /// Hands what the connection holds written (the gRPC door gathers a cycle's frames in one buffer) to the channel,
    /// before a flush.
    func writeHeld(context: ChannelHandlerContext)
}

extension FlushesAnswers {
    func writeHeld(context: ChannelHandlerContext) {}

    /// Flushes now what was written.
    func flushIfNeeded(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            writeHeld(context: context)
            context.flush()
        }
    }

    /// Flushes with the loop's other answers of this cycle (``AnswerFlusher``); at once outside a server.
    func flushSoon(context: ChannelHandlerContext) {
        guard unflushed, !flushQueued else { return }
        guard let flusher else { return flushIfNeeded(context: context) }
        flushQueued = true
        flusher.flushLater(self, context: context)
    }

    /// The flusher's call, once the loop has handled the cycle's reads.
    func flushAnswers(context: ChannelHandlerContext) {
        flushQueued = false
        flushIfNeeded(context: context)
    }
}

/// One event loop's flushes, done together once the loop has handled the reads it woke up for: the answers of a
/// cycle leave one after another instead of one at a time between the cycle's verifications. The HTTP door flushes
/// every answer through it; the gRPC door the answers of a batch or of an asynchronous wait (a gRPC connection's
/// answers of one read already leave together, so it flushes those at the end of its read).
///
/// Every flush is a `write` to a client that is often asleep waiting for it, and waking a sleeping peer is most of a
/// loopback write's cost (on a virtual machine the wake-up is an interrupt to another CPU). A cycle's answers written
/// in a row wake each client once, early in the run, and the rest arrive while it is awake; answers flushed between
/// the cycle's signature verifications wake it again for every answer. A lone request is not held back: the loop
/// runs the flush task right after the reads of its cycle, before it waits for more. Used only on its loop's thread.
final class AnswerFlusher: @unchecked Sendable {
    let eventLoop: any EventLoop
    private var due: [(connection: any FlushesAnswers, context: ChannelHandlerContext)] = []
    private var spare: [(connection: any FlushesAnswers, context: ChannelHandlerContext)] = []
    /// Flush tasks run so far, and the connections they flushed (for tests).
    private(set) var runs = 0
    private(set) var flushed = 0

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Flushes `connection` once the loop has handled this cycle's reads (the connection asks once a cycle: it keeps
    /// whether it has asked).
    func flushLater(_ connection: any FlushesAnswers, context: ChannelHandlerContext) {
        due.append((connection, context))
        if due.count == 1 {
            eventLoop.execute { self.run() }
        }
    }

    private func run() {
        // A flush may answer a connection's next buffered request, which asks for the next cycle's flush.
        swap(&due, &spare)
        runs += 1
        flushed += spare.count
        for (connection, context) in spare { connection.flushAnswers(context: context) }
        spare.removeAll(keepingCapacity: true)
    }
}
