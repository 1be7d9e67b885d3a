/// How long a fetched key set is trusted, when it is refreshed, and how a cache copes with failures
/// (DESIGN §5).
///
/// ```swift
/// var policy = KeyCachePolicy()
/// policy.unknownKidCooldown = .seconds(60)
/// let source = try HTTPKeySource(url: "https://appleid.apple.com/auth/keys", cachePolicy: policy)
/// ```
public struct KeyCachePolicy: Sendable, Equatable {
    /// The shortest lifetime a fetched set gets, whatever the response says. Apple's key endpoint asks not to
    /// be cached at all; refetching on every request would be slow and rude, so the floor applies.
    public var minimumLifetime: Duration = .seconds(5 * 60)
    /// The longest lifetime a fetched set gets, so that a far-future `Expires` cannot pin keys forever.
    public var maximumLifetime: Duration = .seconds(24 * 3600)
    /// The lifetime when the response says nothing about caching.
    public var defaultLifetime: Duration = .seconds(3600)
    /// When, as a fraction of its lifetime, a set is refreshed in the background. A random point in this
    /// range is drawn for each fetch so that a fleet of servers does not refresh in lock-step.
    public var refreshAhead: ClosedRange<Double> = 0.8...0.9
    /// Whether the source refreshes on its own, ahead of expiry. Without it a set is refreshed only when a
    /// caller asks for keys after the refresh point (one-shot tools need no background task).
    public var refreshesInBackground: Bool = true
    /// A token naming a `kid` the set lacks causes at most one refetch per this interval; in between,
    /// callers get the current set at once.
    public var unknownKidCooldown: Duration = .seconds(30)
    /// After a failed fetch the next attempt waits this long, doubling with each further failure up to
    /// ``minimumLifetime``.
    public var retryInterval: Duration = .seconds(10)
    /// How long past its expiry a set is still served while refreshes fail (stale-if-error). After that the
    /// source reports `keys_unavailable` rather than trust keys the provider may have withdrawn.
    public var maximumStaleness: Duration = .seconds(24 * 3600)

    /// The default policy: lifetimes clamped to 5 minutes – 24 hours, one unknown-kid refetch per 30 seconds.
    public init() {}

    /// The lifetime of a response, in seconds, from its caching headers, clamped to the floor and ceiling.
    ///
    /// - `Cache-Control: no-store` or `no-cache` → the floor (the keys are still used; they are just refetched
    ///   as soon as the floor allows).
    /// - `Cache-Control: max-age=N` → N minus `Age`; it wins over `Expires` (RFC 9111 §4.2.1).
    /// - `Expires` → `Expires` minus `Date` (the server's clock, so local clock skew does not matter), or minus
    ///   `now` without a `Date`; an invalid `Expires` (such as `0`) means already expired.
    /// - none of these → ``defaultLifetime``.
    public func lifetime(cacheControl: [String], age: String?, expires: String?, date: String?, now: Double) -> Double {
        let floor = minimumLifetime.inSeconds, ceiling = max(maximumLifetime.inSeconds, floor)
        return min(max(Self.advertisedLifetime(cacheControl: cacheControl, age: age, expires: expires, date: date,
                                               now: now) ?? defaultLifetime.inSeconds, floor), ceiling)
    }

    /// The unclamped lifetime the headers advertise, or nil when they say nothing.
    static func advertisedLifetime(cacheControl: [String], age: String?, expires: String?, date: String?,
                                   now: Double) -> Double? {
        var maxAge: Double?
        for header in cacheControl {
            for directive in header.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].trimmingHTTPWhitespace().lowercased()
                if name == "no-store" || name == "no-cache" { return 0 }
                if name == "max-age", parts.count == 2 {
                    var value = String(parts[1].trimmingHTTPWhitespace())
                    if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                    // A malformed max-age means the response is stale (RFC 9111 §4.2.1).
                    guard !value.isEmpty, value.allSatisfy(\.isASCIIDigit) else { return 0 }
                    let seconds = Double(value) ?? .infinity
                    maxAge = min(maxAge ?? seconds, seconds)
                }
            }
        }
        if let maxAge {
            let ageSeconds = age.flatMap { a -> Double? in
                let t = a.trimmingHTTPWhitespace()
                return !t.isEmpty && t.allSatisfy(\.isASCIIDigit) ? Double(t) : nil
            } ?? 0
            return max(0, maxAge - ageSeconds)
        }
        if let expires {
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            let reference = date.flatMap(HTTPDate.parse) ?? now
            return max(0, expiry - reference)
        }
        return nil
    }
}

extension Duration {
    /// This duration in seconds, as a floating-point number.
    var inSeconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}

fileprivate extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
