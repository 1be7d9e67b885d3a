import Foundation
public import IDTokenKit
import IDTokenKitLifecycle
import NIOConcurrencyHelpers
public import Vapor

extension Application {
    /// The application's ID-token verifiers, one per profile name, and the settings their refusals use.
    ///
    /// ```swift
    /// try app.idTokens.use(.firebase(projectID: "my-app"))                       // keys fetched and refreshed
    /// let signedIn = app.grouped(app.idTokens.authenticator(), IDTokenGuardMiddleware())
    /// ```
    ///
    /// A backend that accepts several providers registers them together: each token goes to the profile its
    /// issuer names (``MultiProfileVerifier``).
    ///
    /// ```swift
    /// try app.idTokens.use([.firebase(projectID: "my-app"), .apple(clientIDs: ["com.example.app"]), .facebook(appIDs: ["1234"])])
    /// let signedIn = app.grouped(app.idTokens.authenticator(), IDTokenGuardMiddleware())
    /// ```
    public var idTokens: IDTokens { IDTokens(application: self) }

    public struct IDTokens: Sendable {
        /// The name a verifier gets when none is given.
        public static let defaultProfile = "default"

        public let application: Application

        /// Registers `verifier` under `name` (replacing one registered before). The first registration adds the
        /// lifecycle handler that keeps the verifiers' HTTP key sources warm while the application runs.
        /// Register during configuration, before the application boots.
        /// - Parameter now: the time this verifier's tokens are judged at; ``IDTokenSettings/now`` when nil.
        public func use(_ verifier: IDTokenVerifier, as name: String = defaultProfile, now: (@Sendable () -> Date)? = nil) {
            use(MultiProfileVerifier(verifier), as: name, now: now)
        }

        /// Registers a verifier over several profiles under `name`: each token is verified by the profile its
        /// issuer names. The first registration adds the lifecycle handler, as ``use(_:as:now:)-(IDTokenVerifier,_,_)`` does.
        /// - Parameter now: the time this verifier's tokens are judged at; ``IDTokenSettings/now`` when nil.
        public func use(_ verifier: MultiProfileVerifier, as name: String = defaultProfile, now: (@Sendable () -> Date)? = nil) {
            let first = registry.withLockedValue { state in
                state.verifiers[name] = Registered(verifier: verifier, now: now)
                defer { state.handlerInstalled = true }
                return !state.handlerInstalled
            }
            if first { application.lifecycle.use(KeyRefreshLifecycleHandler(registry: registry)) }
        }

        /// Registers a verifier for `profile` under `name`, with keys fetched from the profile's keys URL by an
        /// ``HTTPKeySource`` (refreshed in the background; `cacheFile` is its warm-start file).
        /// - Throws: ``ConfigurationError`` for an unusable profile; ``KeyFetchError`` for a bad keys URL.
        @discardableResult
        public func use(_ profile: Profile, as name: String = defaultProfile, replayCache: (any ReplayCache)? = nil,
                        cacheFile: String? = nil) throws -> IDTokenVerifier {
            guard let url = profile.keysURL else {
                throw ConfigurationError("the \(profile.provider.rawValue) profile has no keys URL; pass a verifier with its key source")
            }
            let keys = try HTTPKeySource(url: url, cacheFilePath: cacheFile, logger: application.logger)
            let verifier = try IDTokenVerifier(profile: profile, keys: keys, replayCache: replayCache)
            use(verifier, as: name)
            return verifier
        }

        /// Registers a verifier for `profiles` under `name`, each profile with keys fetched from its keys URL by an
        /// ``HTTPKeySource`` (refreshed in the background): a token goes to the profile its issuer names.
        /// - Throws: ``ConfigurationError`` for an unusable profile, one without a keys URL, or two accepting one issuer.
        @discardableResult
        public func use(_ profiles: [Profile], as name: String = defaultProfile, replayCache: (any ReplayCache)? = nil) throws -> MultiProfileVerifier {
            let verifier = try MultiProfileVerifier(profiles: profiles, replayCache: replayCache)
            use(verifier, as: name)
            return verifier
        }

        /// The verifier registered under `name`.
        public func verifier(_ name: String = defaultProfile) -> MultiProfileVerifier? {
            registry.withLockedValue { $0.verifiers[name]?.verifier }
        }

        /// The verifier under `name` and the clock it runs at.
        func registered(_ name: String) -> (verifier: MultiProfileVerifier, settings: IDTokenSettings)? {
            registry.withLockedValue { state in
                guard let entry = state.verifiers[name] else { return nil }
                var settings = state.settings
                if let now = entry.now { settings.now = now }
                return (entry.verifier, settings)
            }
        }

        /// How refusals are answered and what time verifications run at.
        public var settings: IDTokenSettings {
            get { registry.withLockedValue { $0.settings } }
            nonmutating set { registry.withLockedValue { $0.settings = newValue } }
        }

        /// An authenticator for the verifier registered under `profile`: it logs in the ``VerifiedToken`` of a
        /// request's bearer token; put ``IDTokenGuardMiddleware`` after it to refuse requests without one.
        /// - Parameter nonce: where the raw nonce of the sign-in flow comes from, if the route expects one.
        public func authenticator(profile: String = defaultProfile, nonce: IDTokenNonceSource? = nil) -> IDTokenAuthenticator {
            guard let (verifier, settings) = registered(profile) else {
                fatalError("no ID-token verifier is registered as \"\(profile)\"; call app.idTokens.use(…, as: \"\(profile)\") first")
            }
            return IDTokenAuthenticator(verifier: verifier, nonce: nonce, settings: settings)
        }

        /// The key-refresh service over the registered verifiers' HTTP key sources (also run by the lifecycle
        /// handler); `isReady` tells whether every source has keys.
        public var keyRefresh: KeyRefreshService {
            KeyRefreshService(verifiers: registry.withLockedValue { $0.verifiers.values.flatMap { $0.verifier.members.map(\.verifier) } },
                              logger: application.logger)
        }

        var registry: Registry {
            application.locks.lock(for: RegistryKey.self).withLock {
                if let registry = application.storage[RegistryKey.self] { return registry }
                let registry = Registry(State())
                application.storage[RegistryKey.self] = registry
                return registry
            }
        }
    }

    typealias Registry = NIOLockedValueBox<IDTokenRegistryState>

    struct RegistryKey: StorageKey, LockKey {
        typealias Value = Registry
    }

    typealias State = IDTokenRegistryState
}

struct Registered: Sendable {
    let verifier: MultiProfileVerifier
    let now: (@Sendable () -> Date)?
}

struct IDTokenRegistryState: Sendable {
    var verifiers: [String: Registered] = [:]
    var settings = IDTokenSettings()
    var handlerInstalled = false
    var refreshTask: Task<Void, any Error>?
}

/// What refusals carry and which time verifications run at.
public struct IDTokenSettings: Sendable {
    /// The `realm` of the `WWW-Authenticate` challenge, if any.
    public var realm: String?
    /// The `Retry-After` of a 503 (`keys_unavailable`), in seconds: by default the key sources' first retry
    /// interval.
    public var retryAfterSeconds: Int = Int(KeyCachePolicy().retryInterval.components.seconds)
    /// The time verifications run at: the system clock, unless a test or an audit replay fixes it.
    public var now: @Sendable () -> Date = { Date() }

    public init() {}
}

/// Runs the ``KeyRefreshService`` over the registered verifiers' key sources while the application runs:
/// warms them before the server starts accepting requests (bounded by the sources' fetch timeout; a failure is
/// logged and requests get 503 until a refresh succeeds), and shuts them down when the application shuts down.
struct KeyRefreshLifecycleHandler: LifecycleHandler {
    let registry: Application.Registry

    func didBootAsync(_ application: Application) async throws {
        let service = application.idTokens.keyRefresh
        _ = await service.warm()
        let task = Task { try await service.run() }
        registry.withLockedValue { $0.refreshTask = task }
    }

    func shutdownAsync(_ application: Application) async {
        guard let task = registry.withLockedValue({ s in defer { s.refreshTask = nil }; return s.refreshTask }) else { return }
        // Without a service group, cancellation is the service's shutdown signal: it stops the sources and returns.
        task.cancel()
        _ = try? await task.value
    }
}
