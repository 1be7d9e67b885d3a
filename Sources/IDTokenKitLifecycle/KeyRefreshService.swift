public import IDTokenKit
public import Logging
public import ServiceLifecycle

/// The key refresh of a server's ``HTTPKeySource``s as a swift-service-lifecycle `Service`: it warms the sources
/// (their first fetch, or the warm-start cache file), lets their own background refresh run for as long as the
/// service group runs, and on graceful shutdown (or cancellation) shuts them down, so that no fetch is left in
/// flight and the HTTP clients they made are closed.
///
/// ```swift
/// let keys = try HTTPKeySource(url: Profile.appleJWKSURL)
/// let verifier = try IDTokenVerifier(profile: .apple(clientID: "com.example.app"), keys: keys)
/// let group = ServiceGroup(services: [server, KeyRefreshService(verifiers: [verifier])], logger: logger)
/// ```
///
/// The refresh itself is the source's (single flight, refresh ahead of expiry, stale-if-error, back-off):
/// this service only decides when the sources start being waited for and when they stop. Hummingbird adds it to
/// its service group; the Vapor integration runs it from a `LifecycleHandler`.
public struct KeyRefreshService: Service, CustomStringConvertible {
    /// The sources kept warm, each once.
    public let sources: [HTTPKeySource]
    private let logger: Logger

    public init(sources: [HTTPKeySource], logger: Logger = Logger(label: "IDTokenKit.KeyRefreshService")) {
        var seen = Set<ObjectIdentifier>()
        self.sources = sources.filter { seen.insert(ObjectIdentifier($0)).inserted }
        self.logger = logger
    }

    /// The service for the verifiers' key sources that are ``HTTPKeySource``s (static key sets need no refresh;
    /// two verifiers sharing one source count it once).
    public init(verifiers: [IDTokenVerifier], logger: Logger = Logger(label: "IDTokenKit.KeyRefreshService")) {
        self.init(sources: verifiers.compactMap { $0.keySource as? HTTPKeySource }, logger: logger)
    }

    public var description: String { "KeyRefreshService(\(sources.map(\.url.absoluteString).joined(separator: ", ")))" }

    /// True once every source has a usable key set (what a readiness probe answers).
    public var isReady: Bool { sources.allSatisfy { $0.currentKeys() != nil } }

    /// Warms the sources, then waits for graceful shutdown or cancellation, then shuts the sources down. A
    /// source whose first fetch fails does not stop the service: its background refresh keeps retrying (with
    /// back-off), and requests meanwhile get `keys_unavailable`.
    public func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler {
            _ = await warm()
        } onCancelOrGracefulShutdown: { [sources] in
            // A first fetch still in flight when the server stops is cancelled rather than awaited to its timeout.
            Task { for source in sources { await source.shutdown() } }
        }
        // Returns on graceful shutdown, throws on cancellation: either way the sources stop next.
        try? await gracefulShutdown()
        await shutdown()
        logger.debug("key sources shut down", metadata: ["sources": "\(sources.count)"])
    }

    /// Waits until every source has keys or has failed its first fetch, and returns the failures. Sources with
    /// a usable set (from an earlier fetch or the warm-start file) answer at once.
    public func warm() async -> [(source: HTTPKeySource, error: TokenError)] {
        await withTaskGroup(of: (HTTPKeySource, TokenError)?.self) { group in
            for source in sources {
                group.addTask {
                    do throws(TokenError) { _ = try await source.keys(refreshingFor: nil) } catch { return (source, error) }
                    return nil
                }
            }
            var failures: [(source: HTTPKeySource, error: TokenError)] = []
            for await case let (source, error)? in group {
                logger.warning("no keys yet; requests get keys_unavailable until a refresh succeeds",
                               metadata: ["keys.url": "\(source.url.absoluteString)", "error": "\(error.message)"])
                failures.append((source, error))
            }
            return failures
        }
    }

    /// Stops every source's background refresh and fetches and closes the HTTP clients they made. The last
    /// good sets are still served to requests already in flight.
    public func shutdown() async {
        await withTaskGroup(of: Void.self) { group in
            for source in sources { group.addTask { await source.shutdown() } }
        }
    }
}
