/// What an ``HTTPKeySource`` knows about its own health, for logs, health checks and the CLI.
public struct KeySourceStatus: Sendable, CustomStringConvertible {
    /// The key set URL.
    public let url: String
    /// The kids of the set being served, if any.
    public let kids: [String]
    /// When the set being served was fetched (Unix seconds), or nil before the first success.
    public let fetchedAt: Double?
    /// When that set's cache lifetime ends; after this it is stale.
    public let expiresAt: Double?
    /// When that set stops being served at all, refresh or not (expiry plus the maximum staleness).
    public let usableUntil: Double?
    /// Whether the set came from the warm-start file rather than a fetch by this process.
    public let loadedFromCacheFile: Bool
    /// When the last fetch started.
    public let lastAttemptAt: Double?
    /// When the last fetch failed, and why.
    public let lastFailureAt: Double?
    /// The last fetch's error, when the last fetch failed.
    public let lastError: KeyFetchError?
    /// Fetches that failed since the last success.
    public let consecutiveFailures: Int
    /// Requests started since the source was created.
    public let fetchCount: Int
    /// Fetches that failed since the source was created (a counter: unlike ``consecutiveFailures`` it is not
    /// reset by a success, so a monitor sampling now and then still sees failures that were followed by one).
    public let failureCount: Int
    /// Whether a fetch is in flight.
    public let isRefreshing: Bool
    /// The time these facts were read at.
    public let now: Double

    /// The set is past its cache lifetime (it is still served until ``usableUntil``).
    public var isStale: Bool { expiresAt.map { now >= $0 } ?? false }
    /// How long the set has been served past its cache lifetime, in seconds: 0 while it is fresh (or there is none).
    public var secondsStale: Double { expiresAt.map { max(0, now - $0) } ?? 0 }
    /// Some set can be served.
    public var isUsable: Bool { usableUntil.map { now < $0 } ?? false }

    public var description: String {
        var parts = ["\(url):"]
        if let fetchedAt {
            parts.append("\(kids.count) keys fetched \(UnixTime.iso8601(fetchedAt))\(loadedFromCacheFile ? " (from the cache file)" : "")")
            if let expiresAt { parts.append(isStale ? "stale since \(UnixTime.iso8601(expiresAt))" : "fresh until \(UnixTime.iso8601(expiresAt))") }
            if !isUsable { parts.append("no longer usable") }
        } else {
            parts.append("no keys yet")
        }
        if consecutiveFailures > 0, let lastError {
            parts.append("\(consecutiveFailures) failed fetch(es), last: \(lastError.message)")
        }
        return parts.joined(separator: " ")
    }
}
