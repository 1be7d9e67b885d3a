import Dispatch
import Synchronization

/// A bounded set of blocking Redis connections, handed to one thread at a time.
///
/// At most `poolSize` connections exist. A caller waits (up to the command timeout) for one to come free,
/// reuses an idle one or opens a new one, and gives it back afterwards; a connection whose command failed is
/// dropped rather than given back, so that the next caller reconnects. After a failed connection attempt,
/// no new attempt is made for the reconnect delay: callers fail at once instead of each waiting out a connect
/// timeout against a dead server.
final class RedisConnectionPool: Sendable {
    private struct State: ~Copyable {
        var idle: [RedisConnection] = []
        var lastConnectFailure: (at: ContinuousClock.Instant, reason: String)?
    }

    let configuration: RedisReplayCacheConfiguration
    private let state = Mutex(State())
    /// Counts the connections not checked out, idle or not yet opened.
    private let available: DispatchSemaphore

    init(configuration: RedisReplayCacheConfiguration) {
        precondition(configuration.poolSize >= 1, "a Redis connection pool needs at least one connection")
        self.configuration = configuration
        self.available = DispatchSemaphore(value: configuration.poolSize)
    }

    /// Runs `body` on a connection, retrying once on a fresh connection when a connection that had been idle
    /// in the pool turns out to be dead (the server restarted, or closed it as idle).
    ///
    /// A retry cannot make a token be accepted twice: `SET … NX` answers OK at most once per key whatever
    /// happens. At worst, when the first attempt reached Redis before its connection broke, the retry finds
    /// the key and reports a replay, refusing a token once.
    func withConnection<Result>(_ body: (RedisConnection) throws(RedisFailure) -> Result) throws(RedisFailure) -> Result {
        guard available.wait(timeout: .now() + .milliseconds(Self.milliseconds(configuration.commandTimeout))) == .success else {
            throw RedisFailure(description: "every connection of the pool (\(configuration.poolSize)) stayed busy for "
                               + "the whole command timeout", connectionBroken: false)
        }
        defer { available.signal() }
        let (first, reused) = try checkOut()
        do {
            return try run(body, on: first)
        } catch where error.connectionBroken && reused {
            return try run(body, on: try connect())
        }
    }

    private func run<Result>(_ body: (RedisConnection) throws(RedisFailure) -> Result,
                             on connection: RedisConnection) throws(RedisFailure) -> Result {
        do {
            let result = try body(connection)
            checkIn(connection)
            return result
        } catch {
            // A broken connection is dropped here, and freed with its last reference.
            if !error.connectionBroken { checkIn(connection) }
            throw error
        }
    }

    private func checkOut() throws(RedisFailure) -> (RedisConnection, reused: Bool) {
        let outcome: Result<RedisConnection, RedisFailure>? = state.withCriticalSection { state in
            if let connection = state.idle.popLast() { return .success(connection) }
            if let failure = state.lastConnectFailure,
               failure.at.duration(to: .now) < configuration.reconnectDelay {
                return .failure(RedisFailure(description: failure.reason, connectionBroken: true))
            }
            return nil
        }
        switch outcome {
        case .success(let connection): return (connection, true)
        case .failure(let failure): throw failure
        case nil: return (try connect(), false)
        }
    }

    private func connect() throws(RedisFailure) -> RedisConnection {
        do {
            let connection = try RedisConnection(
                host: configuration.host, port: configuration.port,
                connectTimeoutMilliseconds: Self.milliseconds(configuration.connectTimeout),
                commandTimeoutMilliseconds: Self.milliseconds(configuration.commandTimeout),
                username: configuration.username, password: configuration.password, database: configuration.database)
            state.withCriticalSection { $0.lastConnectFailure = nil }
            return connection
        } catch {
            state.withCriticalSection { $0.lastConnectFailure = (ContinuousClock.now, error.description) }
            throw error
        }
    }

    private func checkIn(_ connection: RedisConnection) {
        guard !connection.isBroken else { return }
        state.withCriticalSection { $0.idle.append(connection) }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}
