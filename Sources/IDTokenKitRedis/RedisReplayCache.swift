import Dispatch
@_exported import IDTokenKit
import Logging
import Synchronization

/// A replay cache on Redis, shared by every process and host that points at the same server (DESIGN §6).
///
/// ```swift
/// let replay = try RedisReplayCache(url: "redis://:secret@10.0.0.5:6379/2")
/// guard try await replay.insertIfAbsent(entry, now: now) else { /* a replay: refuse the token */ }
/// ```
///
/// Each check is one `SET <key> 1 NX PXAT <(exp + leeway) × 1000>`: Redis stores the key only if it is absent,
/// atomically, so when any number of processes present the same token at once exactly one gets `OK` (accept)
/// and the others get nil (a replay); Redis forgets the key when the token could no longer be accepted anyway.
/// See ``key(for:prefix:)`` for the key layout. PXAT needs Redis 6.2 or later (``RedisReplayCacheConfiguration/Expiry/relativeToNow``
/// uses PX, which older servers have).
///
/// **Connections.** A bounded pool (``RedisReplayCacheConfiguration/poolSize``) of blocking hiredis
/// connections, with connect and command timeouts; a connection that fails is dropped and the next check
/// reconnects. ``insertIfAbsent(_:now:)`` runs the blocking call on dispatch queues of its own, never on the
/// Swift concurrency pool; ``insertIfAbsentNow(_:now:)`` blocks the calling thread, for batch work.
///
/// **When Redis is unavailable** (unreachable, timing out, answering errors) the ``RedisReplayCacheConfiguration/FailureMode``
/// decides: `reject` (the default) throws ``TokenError`` with code `replay_store_unavailable` and a message that
/// says the replay store is unavailable (never `replayed`: the token was not judged, and HTTP doors answer 503 with
/// `Retry-After`); `allow` accepts the token unchecked. Either way the outage is logged: an error (reject) or warning
/// (allow) at the first failed check and then at most once a second with the number of checks affected, and a
/// notice when Redis answers again. Entries are whatever the Redis server keeps: a server restarted without
/// persistence has forgotten the tokens it saw.
public final class RedisReplayCache: SynchronousReplayCache {
    /// Where the cache connects and how it behaves when Redis cannot be reached.
    public let configuration: RedisReplayCacheConfiguration
    let pool: RedisConnectionPool  // internal: the audit's run record (RedisReplayCache+AuditRun.swift) uses it too
    private let logger: Logger
    private let outage = Mutex(OutageLog())
    /// Read on every successful check, written only when an outage starts or ends.
    private let isDown = Atomic<Bool>(false)
    private let failures = Atomic<Int>(0)
    private let unchecked = Atomic<Int>(0)

    /// Checks Redis could not answer (unreachable, timing out, an error reply), whatever the failure mode did.
    public var failureCount: Int { failures.load(ordering: .relaxed) }
    /// Tokens accepted without their replay check because Redis could not answer and the failure mode is `allow`.
    public var uncheckedCount: Int { unchecked.load(ordering: .relaxed) }

    /// Blocking Redis calls for the async API wait on these, off the cooperative thread pool: one serial queue
    /// per pooled connection, taken in turn. Serial queues get a thread of their own when busy, where a
    /// concurrent queue would run only about as many blocking calls at once as there are CPUs.
    private let blockingQueues: [DispatchQueue]
    private let nextQueue = Atomic<Int>(0)

    /// Creates a cache; no connection is opened until the first check.
    public init(configuration: RedisReplayCacheConfiguration,
                logger: Logger = Logger(label: "IDTokenKitRedis.RedisReplayCache")) {
        self.configuration = configuration
        self.pool = RedisConnectionPool(configuration: configuration)
        self.logger = logger
        self.blockingQueues = (0..<max(1, configuration.poolSize)).map {
            DispatchQueue(label: "IDTokenKitRedis.RedisReplayCache.\($0)")
        }
    }

    /// Creates a cache from a `redis://[[username]:password@]host[:port][/database]` URL
    /// (see ``RedisReplayCacheConfiguration/init(url:)``).
    public convenience init(url: String, failureMode: RedisReplayCacheConfiguration.FailureMode = .reject,
                            expiry: RedisReplayCacheConfiguration.Expiry = .absolute,
                            logger: Logger = Logger(label: "IDTokenKitRedis.RedisReplayCache")) throws(RedisConfigurationError) {
        var configuration = try RedisReplayCacheConfiguration(url: url)
        configuration.failureMode = failureMode
        configuration.expiry = expiry
        self.init(configuration: configuration, logger: logger)
    }

    /// Records `entry` in Redis unless it is there already; waits on a dedicated queue, not on the caller's.
    ///
    /// - Returns: `true` for a first sighting (accept), `false` for a replay. An entry whose `expiresAt` is
    ///   already `<= now` is not sent and gives `true`: its token is expired and cannot be accepted anyway.
    /// - Throws: ``TokenError`` code `replay_store_unavailable` when Redis is unavailable and the failure mode is `reject`.
    public func insertIfAbsent(_ entry: ReplayEntry, now: Int64) async throws(TokenError) -> Bool {
        guard entry.expiresAt > now else { return true }
        return try await blocking { () throws(TokenError) in try self.insertIfAbsentNow(entry, now: now) }
    }

    /// Runs `body`, which blocks on Redis, on one of the cache's own queues, and waits for it without blocking the
    /// caller's thread.
    func blocking<T: Sendable>(_ body: @escaping @Sendable () throws(TokenError) -> T) async throws(TokenError) -> T {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, TokenError>, Never>) in
            let turn = nextQueue.wrappingAdd(1, ordering: .relaxed).oldValue
            blockingQueues[Int(UInt(bitPattern: turn) % UInt(blockingQueues.count))].async {
                continuation.resume(returning: Result { () throws(TokenError) -> T in try body() })
            }
        }
        return try outcome.get()
    }

    /// Records `entry` in Redis unless it is there already, blocking the calling thread for the round trip.
    /// Same results as ``insertIfAbsent(_:now:)``.
    public func insertIfAbsentNow(_ entry: ReplayEntry, now: Int64) throws(TokenError) -> Bool {
        guard entry.expiresAt > now else { return true }
        let command = setCommand(for: entry, now: now)
        let reply: RedisReply
        do {
            reply = try pool.withConnection { connection throws(RedisFailure) in try connection.command(command) }
        } catch {
            return try unavailable(error.description)
        }
        switch reply {
        case .status("OK"):
            noteAnswered()
            return true
        case .null:
            noteAnswered()
            return false
        case .error(let message):
            return try unavailable("Redis answered SET with an error: \(message)")
        default:
            return try unavailable("Redis answered SET with \(reply), not OK or nil")
        }
    }

    // MARK: Keys

    /// The Redis key for `entry`: `<prefix><issuer hash>:<signature digest>`, where the issuer hash is the
    /// first 16 bytes of SHA-256 of the issuer's UTF-8 bytes and the digest is the entry's signature digest,
    /// both in lowercase hex. For example
    /// `idtk:replay:9b5cd3c36e1e3e6e2b0c1f0a4a8dfb3f:1d3f…` (64 hex digits after the colon). A fixed-length,
    /// printable key whatever the issuer, so that `redis-cli --scan --pattern 'idtk:replay:*'` lists them all.
    public static func key(for entry: ReplayEntry, prefix: String) -> String {
        String(decoding: keyBytes(for: entry, prefix: prefix), as: UTF8.self)
    }

    static func keyBytes(for entry: ReplayEntry, prefix: String) -> [UInt8] {
        var key = Array(prefix.utf8)
        key.reserveCapacity(key.count + 32 + 1 + 2 * entry.tokenDigest.count)
        Hex.appendLowercase(SHA256.hash(Array(entry.issuer.utf8)).prefix(16), to: &key)
        key.append(UInt8(ascii: ":"))
        Hex.appendLowercase(entry.tokenDigest, to: &key)
        return key
    }

    /// Unix seconds at the end of year 9999: later expiries are clamped, so that the milliseconds stay far
    /// inside what Redis accepts.
    static let latestExpiry = Int64(UnixTime.latest)

    func setCommand(for entry: ReplayEntry, now: Int64) -> [[UInt8]] {
        let key = Self.keyBytes(for: entry, prefix: configuration.keyPrefix)
        let expiresAt = min(entry.expiresAt, Self.latestExpiry)
        switch configuration.expiry {
        case .absolute:
            return [Array("SET".utf8), key, [UInt8(ascii: "1")], Array("NX".utf8), Array("PXAT".utf8),
                    Array(String(expiresAt * 1000).utf8)]
        case .relativeToNow:
            let milliseconds = (expiresAt - max(now, 0)) * 1000
            return [Array("SET".utf8), key, [UInt8(ascii: "1")], Array("NX".utf8), Array("PX".utf8),
                    Array(String(milliseconds).utf8)]
        }
    }

    // MARK: Outages

    private struct OutageLog {
        var lastLogged: ContinuousClock.Instant?
        var unloggedChecks = 0
        var affectedChecks = 0
    }

    /// Applies the failure mode to a check Redis could not answer, and logs the outage without flooding.
    func unavailable(_ reason: String) throws(TokenError) -> Bool {
        let mode = configuration.failureMode
        failures.add(1, ordering: .relaxed)
        let now = ContinuousClock.now
        let report: (first: Bool, checks: Int)? = outage.withCriticalSection { log in
            log.affectedChecks += 1
            let first = !isDown.load(ordering: .relaxed)
            if first { isDown.store(true, ordering: .relaxed) }
            if !first, let last = log.lastLogged, last.duration(to: now) < .seconds(1) {
                log.unloggedChecks += 1
                return nil
            }
            defer { log.lastLogged = now; log.unloggedChecks = 0 }
            return (first, log.unloggedChecks + 1)
        }
        if let report {
            let metadata: Logger.Metadata = [
                "replay_store": "\(configuration.displayAddress)",
                "failure_mode": "\(mode.rawValue)",
                "reason": "\(reason)",
                "checks": "\(report.checks)",
            ]
            let action = mode == .reject ? "refusing tokens" : "accepting tokens without a replay check"
            let message: Logger.Message = report.first
                ? "replay store unavailable: \(action) (failure mode \(mode.rawValue))"
                : "replay store still unavailable: \(action) (failure mode \(mode.rawValue))"
            logger.log(level: mode == .reject ? .error : .warning, message, metadata: metadata)
        }
        switch mode {
        case .allow:
            unchecked.add(1, ordering: .relaxed)
            return true
        case .reject:
            let address = configuration.displayAddress
            throw TokenError(.replayStoreUnavailable,
                "the replay store could not answer: \(address) is unavailable (\(reason)), so this token's replay check cannot be made; "
                + "it is refused because the failure mode is reject. Check that Redis is running and reachable, "
                + "or choose the allow failure mode to accept tokens unchecked during outages")
        }
    }

    func noteAnswered() {
        guard isDown.load(ordering: .relaxed) else { return }
        let affected: Int? = outage.withCriticalSection { log in
            guard isDown.load(ordering: .relaxed) else { return nil }
            isDown.store(false, ordering: .relaxed)
            defer { log = OutageLog() }
            return log.affectedChecks
        }
        if let affected {
            logger.notice("replay store reachable again", metadata: [
                "replay_store": "\(configuration.displayAddress)",
                "failure_mode": "\(configuration.failureMode.rawValue)",
                "checks_during_outage": "\(affected)",
            ])
        }
    }
}
