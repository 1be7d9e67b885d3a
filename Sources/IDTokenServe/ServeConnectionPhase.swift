import NIOCore

/// Where one connection of `idtoken serve` stands: the one place its state is kept (in the manner of swift-nio's
/// `HTTPServerPipelineHandler.ConnectionState`), and the decisions that depend only on it — what a clock tick does,
/// what a shutdown request does, whether the connection may read — as pure functions, tested on their own.
///
/// ```
///   idle ──first byte──▶ head ──complete──▶ (answered at once) ──▶ body ──skipped──▶ idle
///                         │                      │                  │
///                         │                 (waits: key fetch,      └─ requestTimeout from the request's
///                         │                  Redis) answering          first byte: closed
///                         └─ requestTimeout: 408, lingering
///   any phase ──Connection: close, refusal, shutdown──▶ lingering ──client closes / 2 s──▶ closed
/// ```
enum ServeConnectionPhase: Equatable {
    /// Between requests: nothing of the next one has arrived.
    case idle
    /// Bytes of a head have arrived, the first at `since`; the head is not complete.
    case head(since: NIODeadline)
    /// A request was answered; `remaining` bytes of the body it declared are still to be skipped. Its first byte
    /// came at `since`.
    case body(remaining: Int, since: NIODeadline)
    /// An answer is being worked out off the event loop (a key fetch, Redis): nothing is read or parsed until it
    /// is written. Then `remaining` body bytes are to be skipped, counted from `since`; with `closing` (a shutdown
    /// came meanwhile) the answer says `Connection: close` and the connection closes after it.
    case answering(remaining: Int, since: NIODeadline, closing: Bool)
    /// The last answer is written and the write side shut: input is dropped until the client closes.
    case lingering
    /// Closed or closing: nothing more is read, parsed or written.
    case closed

    /// Whether requests may still be parsed and answered.
    var isOpen: Bool {
        switch self {
        case .idle, .head, .body, .answering: return true
        case .lingering, .closed: return false
        }
    }

    /// What a clock tick does.
    enum Timeout: Equatable {
        case none
        /// The head did not arrive in time: answer 408 and close.
        case requestTimeout
        /// The body did not arrive in time (its request was answered), or nothing happened for the idle timeout:
        /// close.
        case close
    }

    /// What a clock tick at `now` does, with the last traffic at `lastActivity`. A connection whose client has
    /// stopped taking its answers has no traffic either (nothing is read meanwhile), and closes after the idle timeout.
    func timeout(now: NIODeadline, lastActivity: NIODeadline, requestTimeout: TimeAmount, idleTimeout: TimeAmount) -> Timeout {
        // A stalled writer is idle: nothing is read while its answers wait, so `lastActivity` stays where it was.
        switch self {
        case .head(let since):
            return now - since >= requestTimeout ? .requestTimeout : .none
        case .body(_, let since):
            return now - since >= requestTimeout ? .close : .none
        case .idle:
            return now - lastActivity >= idleTimeout ? .close : .none
        case .answering, .lingering, .closed:
            return .none
        }
    }

    /// What a shutdown request (`ChannelShouldQuiesceEvent`) does.
    enum Quiesce: Equatable {
        /// Close lingering now: the connection is between answers.
        case closeNow
        /// Close lingering after the answer being worked out, which says `Connection: close`.
        case closeAfterAnswer
        case nothing
    }

    var onQuiesce: Quiesce {
        switch self {
        case .idle, .head, .body: return .closeNow
        case .answering: return .closeAfterAnswer
        case .lingering, .closed: return .nothing
        }
    }

    /// Whether the connection may ask the socket for more bytes: not while an answer is worked out or the client
    /// has not taken the answers written (`writable` false, backpressure), always while lingering (to drop what the
    /// client still sends until it closes).
    func mayRead(writable: Bool) -> Bool {
        switch self {
        case .idle, .head, .body: return writable
        case .answering, .closed: return false
        case .lingering: return true
        }
    }
}
