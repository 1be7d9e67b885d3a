import IDTokenKit
import Logging

/// Key sets fetched over HTTPS, as the tool uses them: `--keys URL` and the providers' default key URLs.
enum RemoteKeys {
    static func isURL(_ source: String) -> Bool {
        KeySourceResolver.kind(of: source) == .url
    }

    /// A run of the tool is short: no background refresh, just a fetch when keys are first needed.
    static var cachePolicy: KeyCachePolicy {
        var policy = KeyCachePolicy()
        policy.refreshesInBackground = false
        return policy
    }

    /// The commands report fetch failures themselves; the cache's own log lines would repeat them.
    static func logger(verbose: Bool = false) -> Logger {
        var logger = Logger(label: "idtoken.keys")
        logger.logLevel = verbose ? .debug : .critical
        return logger
    }

    /// An HTTPS key source for `url`.
    /// - Throws: ``UsageError`` when the URL is not `https` (or `http` to a loopback address).
    static func keySource(url: String, profile: Profile) throws -> any KeySource {
        do {
            return try HTTPKeySource(url: url, cachePolicy: cachePolicy, logger: logger())
        } catch {
            throw UsageError(error.message)
        }
    }
}
