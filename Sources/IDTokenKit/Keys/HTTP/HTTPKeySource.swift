import AsyncHTTPClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Keys fetched over HTTPS (a JWKS or Google's kid → PEM certificate map) and cached by the rules of
/// DESIGN §5, so that a request whose key is cached never waits on the network.
///
/// ```swift
/// let keys = try HTTPKeySource(url: Profile.appleJWKSURL)
/// defer { Task { await keys.shutdown() } }
/// let set = try await keys.keys(refreshingFor: nil)   // waits for the first fetch only
/// ```
///
/// - ``currentKeys()`` reads an immutable snapshot under a lock held for one reference copy: no `await`, no
///   actor hop, never a fetch.
/// - One fetch is in flight at a time; everyone who needs it awaits the same one (single flight).
/// - The set is refreshed in the background at 80–90 % of its cache lifetime (`Cache-Control: max-age` minus
///   `Age`, or `Expires`, clamped to ``KeyCachePolicy/minimumLifetime`` and ``KeyCachePolicy/maximumLifetime``).
/// - A `kid` the set lacks causes at most one refetch per ``KeyCachePolicy/unknownKidCooldown``; within the
///   cooldown the caller gets the current set at once, so made-up kids cannot become a flood of requests.
/// - A failed refresh keeps the last good set (stale-if-error) for ``KeyCachePolicy/maximumStaleness`` past
///   its expiry, logs a warning and shows in ``status()``; retries back off from
///   ``KeyCachePolicy/retryInterval``.
/// - Only `https` URLs, or `http` to a loopback address; redirects are not followed; bodies over
///   ``KeyFetchLimits/maximumBodyBytes`` are cut off as they stream; a non-200 status, a malformed body or a
///   set with no usable key is a failed fetch.
///
/// Call ``shutdown()`` when done: it stops the background refresh and closes the HTTP client the source made.
public final class HTTPKeySource: KeySource {
    /// The path an issuer's OpenID Connect discovery document has below the issuer.
    public static let discoverySuffix = "/.well-known/openid-configuration"

    /// Where the keys come from: the key set, or an issuer's OpenID Connect discovery document
    /// (`<issuer>/.well-known/openid-configuration`) that names it.
    public let url: KeySetURL
    /// With a discovery document for ``url``: the issuer it must name (the URL without the well-known suffix).
    public let discoveryIssuer: String?
    /// How long fetched sets are kept and how often unknown kids may trigger a refetch.
    public let cachePolicy: KeyCachePolicy
    /// Timeouts and the largest response accepted.
    public let limits: KeyFetchLimits
    /// The warm-start file, if any: read at creation, rewritten after each successful fetch.
    public let cacheFilePath: String?

    let client: HTTPClient
    let ownsClient: Bool
    let clock: any KeyCacheClock
    let logger: Logger
    let state: NIOLockedValueBox<State>
    /// The hot-path view, kept apart from `state` so that readers contend only with the rare publish.
    let published: NIOLockedValueBox<Published?>

    /// - Parameters:
    ///   - url: the JWKS or certificate-map URL, or an issuer's discovery document
    ///     (`<issuer>/.well-known/openid-configuration`, whose `jwks_uri` is then fetched on every refresh); `https`,
    ///     or `http` to 127.0.0.0/8, `::1` or `localhost`.
    ///   - httpClient: the client to fetch with. Without one, the source makes its own (with
    ///     ``KeyFetchLimits/connectTimeout``, redirects off, one connection attempt per fetch) and shuts it down in ``shutdown()``. A client
    ///     passed in is used as configured (its connect timeout and redirect rules) and is not shut down.
    ///   - cachePolicy: how long fetched sets are kept, when they are refreshed, how often an unknown kid may
    ///     trigger a refetch.
    ///   - limits: timeouts and the largest response accepted.
    ///   - clock: the clock cache times are read from; the system clock unless a test injects one.
    ///   - cacheFilePath: a warm-start file (see ``KeyCacheFile``); a usable set in it is served at once.
    ///   - logger: where fetches, refresh failures and stale sets are reported.
    /// - Throws: ``KeyFetchError`` `insecureURL` when the URL breaks the transport rule.
    public init(url: String, httpClient: HTTPClient? = nil, cachePolicy: KeyCachePolicy = KeyCachePolicy(),
                limits: KeyFetchLimits = KeyFetchLimits(), clock: any KeyCacheClock = SystemKeyCacheClock(),
                cacheFilePath: String? = nil,
                logger: Logger = Logger(label: "IDTokenKit.HTTPKeySource")) throws(KeyFetchError) {
        self.url = try KeySetURL(url)
        self.discoveryIssuer = url.hasSuffix(Self.discoverySuffix) ? String(url.dropLast(Self.discoverySuffix.count)) : nil
        self.cachePolicy = cachePolicy
        self.limits = limits
        self.cacheFilePath = cacheFilePath
        self.clock = clock
        var logger = logger
        logger[metadataKey: "keys.url"] = "\(url)"
        self.logger = logger
        if let httpClient {
            self.client = httpClient
            self.ownsClient = false
        } else {
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(connect: Self.timeAmount(limits.connectTimeout), read: Self.timeAmount(limits.totalTimeout)))
            // One connection attempt per fetch: a refused connection fails the fetch at once, and the cache's
            // own retry interval (with back-off) decides when to try again.
            configuration.connectionPool.retryConnectionEstablishment = false
            self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            self.ownsClient = true
        }
        self.state = NIOLockedValueBox(State())
        self.published = NIOLockedValueBox(nil)

        if let cacheFilePath { loadCacheFile(cacheFilePath) }
        if cachePolicy.refreshesInBackground { startRefreshLoop() }
    }

    deinit {
        let (loop, inFlight, shutDown) = state.withLockedValue { ($0.refreshTask, $0.inFlight, $0.isShutDown) }
        loop?.cancel()
        inFlight?.cancel()
        if ownsClient && !shutDown {
            // The client keeps itself alive until its shutdown completes.
            client.shutdown { _ in }
        }
    }

    // MARK: KeySource

    /// The set to verify with, without waiting: nil before the first successful load, and nil once the set
    /// has been stale for longer than ``KeyCachePolicy/maximumStaleness``. Never starts a fetch.
    public func currentKeys() -> JWKSet? {
        guard let snapshot = published.withLockedValue({ $0 }) else { return nil }
        return clock.now() < snapshot.usableUntil ? snapshot.keys : nil
    }

    /// ``currentKeys()`` lent to `body`: the published view is retained once, its key set not copied.
    public func withCurrentKeys<Result>(_ body: (JWKSet) -> Result) -> Result? {
        guard let snapshot = published.withLockedValue({ $0 }), clock.now() < snapshot.usableUntil else { return nil }
        return body(snapshot.keys)
    }

    /// A set to verify with.
    ///
    /// - With a usable set and no `unknownKid` (or one the set has), returns it at once. Without background
    ///   refresh, a set past its refresh point also starts a fetch, which this call does not wait for.
    /// - With an `unknownKid` the set lacks: joins the fetch in flight, or starts one if the last fetch began
    ///   at least ``KeyCachePolicy/unknownKidCooldown`` ago, and returns what it yields (the current set if it
    ///   fails); otherwise returns the current set at once.
    /// - Without a usable set: waits for a fetch (one shared by every caller); after a failure, calls within
    ///   the retry interval fail at once instead of hammering the endpoint.
    /// - Throws: ``TokenError`` `keys_unavailable` when no usable set can be had.
    public func keys(refreshingFor unknownKid: String?) async throws(TokenError) -> JWKSet {
        let now = clock.now()
        let plan: Plan = state.withLockedValue { s in
            if let snapshot = s.snapshot, now < snapshot.usableUntil {
                if let unknownKid, snapshot.keys.key(kid: unknownKid) == nil {
                    if let task = s.inFlight { return .wait(task, fallback: snapshot.keys) }
                    guard !s.isShutDown,
                          s.lastAttemptAt.map({ now - $0 >= cachePolicy.unknownKidCooldown.inSeconds }) ?? true else {
                        return .use(snapshot.keys, note: .withinCooldown)
                    }
                    return .wait(startFetch(&s, now: now, reason: "unknown kid"), fallback: snapshot.keys)
                }
                if !cachePolicy.refreshesInBackground, !s.isShutDown, s.inFlight == nil, now >= snapshot.refreshAt,
                   now >= retryAllowedAt(s) {
                    _ = startFetch(&s, now: now, reason: "refresh due")
                }
                return .use(snapshot.keys, note: nil)
            }
            if let task = s.inFlight { return .wait(task, fallback: nil) }
            if s.isShutDown {
                return .fail(KeyFetchError(.shutDown, "the key source for \(url) was shut down"))
            }
            if now < retryAllowedAt(s), let error = s.lastError {
                return .fail(error)
            }
            return .wait(startFetch(&s, now: now, reason: s.snapshot == nil ? "first load" : "keys too stale"), fallback: nil)
        }
        switch plan {
        case .use(let keys, let note):
            if note == .withinCooldown, let unknownKid {
                logger.debug("unknown kid within the refetch cooldown; not refetching", metadata: ["kid": "\(unknownKid)"])
            }
            return keys
        case .fail(let error):
            throw error.tokenError
        case .wait(let task, let fallback):
            do {
                return try await task.value.keys
            } catch {
                if let fallback { return fallback }
                throw (error as? KeyFetchError ?? KeyFetchError(.transport, "\(error)")).tokenError
            }
        }
    }

    // MARK: Control and status

    /// Fetches now (or joins the fetch in flight), whatever the cache times say, and returns the new set.
    /// - Throws: ``KeyFetchError`` when the fetch fails; the previous set stays in use.
    @discardableResult
    public func refresh() async throws(KeyFetchError) -> JWKSet {
        let task: Task<Snapshot, any Error>? = state.withLockedValue { s in
            s.isShutDown ? nil : (s.inFlight ?? startFetch(&s, now: clock.now(), reason: "requested"))
        }
        guard let task else { throw KeyFetchError(.shutDown, "the key source for \(url) was shut down") }
        do { return try await task.value.keys } catch {
            throw error as? KeyFetchError ?? KeyFetchError(.transport, "\(error)")
        }
    }

    /// The source's health: what it serves, since when, until when, and how its fetches went.
    public func status() -> KeySourceStatus {
        let now = clock.now()
        return state.withLockedValue { s in
            KeySourceStatus(url: url.absoluteString, kids: s.snapshot?.keys.kids ?? [], fetchedAt: s.snapshot?.fetchedAt,
                            expiresAt: s.snapshot?.expiresAt, usableUntil: s.snapshot?.usableUntil,
                            loadedFromCacheFile: s.snapshot?.fromCacheFile ?? false, lastAttemptAt: s.lastAttemptAt,
                            lastFailureAt: s.lastFailureAt, lastError: s.lastError,
                            consecutiveFailures: s.consecutiveFailures, fetchCount: s.fetchCount, failureCount: s.failureCount,
                            isRefreshing: s.inFlight != nil, now: now)
        }
    }

    /// The response body of the set being served, byte for byte (what `keys fetch --out` writes).
    public func currentBody() -> [UInt8]? { state.withLockedValue { $0.snapshot?.body } }

    /// Stops the background refresh and any fetch in flight, and shuts down the HTTP client the source made.
    /// The last good set is still served afterwards (until it is too stale), but nothing is fetched again.
    public func shutdown() async {
        let (loop, inFlight, first) = state.withLockedValue { s in
            defer { s.isShutDown = true }
            return (s.refreshTask, s.inFlight, !s.isShutDown)
        }
        loop?.cancel()
        inFlight?.cancel()
        _ = await loop?.value
        _ = try? await inFlight?.value
        if first && ownsClient {
            do { try await client.shutdown() } catch {
                logger.debug("HTTP client shutdown reported an error", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: State

    struct Snapshot: Sendable {
        var keys: JWKSet
        let body: [UInt8]
        let fetchedAt: Double
        let expiresAt: Double
        let refreshAt: Double
        let usableUntil: Double
        let fromCacheFile: Bool
    }

    /// What ``currentKeys()`` reads: one reference, copied under the lock.
    final class Published: Sendable {
        let keys: JWKSet
        let usableUntil: Double
        init(keys: JWKSet, usableUntil: Double) {
            self.keys = keys
            self.usableUntil = usableUntil
        }
    }

    struct State: Sendable {
        var snapshot: Snapshot?
        var inFlight: Task<Snapshot, any Error>?
        var refreshTask: Task<Void, Never>?
        var lastAttemptAt: Double?
        var lastFailureAt: Double?
        var lastError: KeyFetchError?
        var consecutiveFailures = 0
        var fetchCount = 0
        var failureCount = 0
        var isShutDown = false
        /// When the background loop, asleep, wakes next (nil while it is fetching or deciding).
        var loopSleepsUntil: Double?
        /// The key set the discovery document named last.
        var discoveredKeysURL: KeySetURL?
    }

    enum Note { case withinCooldown }

    enum Plan {
        case use(JWKSet, note: Note?)
        case wait(Task<Snapshot, any Error>, fallback: JWKSet?)
        case fail(KeyFetchError)
    }

    /// The earliest time another fetch may start after failures: the retry interval, doubled per further
    /// failure, capped at the minimum lifetime.
    func retryAllowedAt(_ s: State) -> Double {
        guard s.consecutiveFailures > 0, let failed = s.lastFailureAt else { return -.infinity }
        let base = cachePolicy.retryInterval.inSeconds
        let delay = min(base * Double(1 << min(s.consecutiveFailures - 1, 20)), max(base, cachePolicy.minimumLifetime.inSeconds))
        return failed + delay
    }

    /// Starts a fetch; the caller holds the state lock, so the task cannot finish (and clear `inFlight`)
    /// before it has been recorded.
    func startFetch(_ s: inout State, now: Double, reason: String) -> Task<Snapshot, any Error> {
        if let task = s.inFlight { return task }
        s.lastAttemptAt = now
        s.fetchCount += 1
        let task = Task { try await self.fetch(reason: reason) }
        s.inFlight = task
        return task
    }

    func publish(_ snapshot: Snapshot, into s: inout State) {
        s.snapshot = snapshot
        let view = Published(keys: snapshot.keys, usableUntil: snapshot.usableUntil)
        published.withLockedValue { $0 = view }
    }

    func makeSnapshot(keys: JWKSet, body: [UInt8], fetchedAt: Double, expiresAt: Double,
                              fromCacheFile: Bool) -> Snapshot {
        let lifetime = max(0, expiresAt - fetchedAt)
        let fraction = min(max(Double.random(in: cachePolicy.refreshAhead), 0), 1)
        return Snapshot(keys: keys, body: body, fetchedAt: fetchedAt, expiresAt: expiresAt,
                        refreshAt: fetchedAt + lifetime * fraction,
                        usableUntil: expiresAt + cachePolicy.maximumStaleness.inSeconds, fromCacheFile: fromCacheFile)
    }

    // MARK: Helpers

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(min(duration.inSeconds, 1e9) * 1e9))
    }

    static func describe(_ duration: Duration) -> String {
        let s = duration.inSeconds
        return s < 1 ? "\(Int((s * 1000).rounded())) ms" : "\(s.formatted2) s"
    }
}

private extension Double {
    var formatted2: String {
        self == rounded() ? String(Int(self)) : String((self * 100).rounded() / 100)
    }
}
