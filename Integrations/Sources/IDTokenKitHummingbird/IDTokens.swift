import Foundation
public import IDTokenKit
public import IDTokenKitLifecycle
import Logging

/// The application's ID-token verifiers, one per profile name, and the settings their refusals use.
///
/// ```swift
/// var idTokens = IDTokens()
/// try idTokens.use(.firebase(projectID: "my-app"))                     // keys fetched and refreshed
/// router.add(middleware: idTokens.authenticator()).add(middleware: IDTokenGuardMiddleware())
/// let app = Application(router: router, services: [idTokens.keyRefresh])
/// ```
///
/// A backend that accepts several providers registers them together: each token goes to the profile its issuer
/// names (``MultiProfileVerifier``): `try idTokens.use([.firebase(projectID: "my-app"), .apple(clientIDs: ["com.example.app"])])`.
///
/// Built during configuration, then read only: the middleware captures its verifier when it is made.
public struct IDTokens: Sendable {
    /// The name a verifier gets when none is given.
    public static let defaultProfile = "default"

    private var verifiers: [String: (verifier: MultiProfileVerifier, now: (@Sendable () -> Date)?)] = [:]
    /// How refusals are answered and what time verifications run at.
    public var settings: IDTokenSettings
    public var logger: Logger

    public init(settings: IDTokenSettings = IDTokenSettings(), logger: Logger = Logger(label: "IDTokenKitHummingbird")) {
        self.settings = settings
        self.logger = logger
    }

    /// Registers `verifier` under `name`, replacing one registered before.
    /// - Parameter now: the time this verifier's tokens are judged at; ``IDTokenSettings/now`` when nil.
    public mutating func use(_ verifier: IDTokenVerifier, as name: String = defaultProfile, now: (@Sendable () -> Date)? = nil) {
        verifiers[name] = (MultiProfileVerifier(verifier), now)
    }

    /// Registers a verifier over several profiles under `name`: each token is verified by the profile its issuer names.
    /// - Parameter now: the time this verifier's tokens are judged at; ``IDTokenSettings/now`` when nil.
    public mutating func use(_ verifier: MultiProfileVerifier, as name: String = defaultProfile, now: (@Sendable () -> Date)? = nil) {
        verifiers[name] = (verifier, now)
    }

    /// Registers a verifier for `profiles` under `name`, each profile with keys fetched from its keys URL by an
    /// ``HTTPKeySource`` (refreshed while ``keyRefresh`` runs): a token goes to the profile its issuer names.
    /// - Throws: ``ConfigurationError`` for an unusable profile, one without a keys URL, or two accepting one issuer.
    @discardableResult
    public mutating func use(_ profiles: [Profile], as name: String = defaultProfile,
                             replayCache: (any ReplayCache)? = nil) throws -> MultiProfileVerifier {
        let verifier = try MultiProfileVerifier(profiles: profiles, replayCache: replayCache)
        use(verifier, as: name)
        return verifier
    }

    /// Registers a verifier for `profile` under `name`, with keys fetched from the profile's keys URL by an
    /// ``HTTPKeySource`` (refreshed in the background while ``keyRefresh`` runs; `cacheFile` is its warm-start file).
    @discardableResult
    public mutating func use(_ profile: Profile, as name: String = defaultProfile, replayCache: (any ReplayCache)? = nil,
                             cacheFile: String? = nil) throws -> IDTokenVerifier {
        guard let url = profile.keysURL else {
            throw ConfigurationError("the \(profile.provider.rawValue) profile has no keys URL; pass a verifier with its key source")
        }
        let keys = try HTTPKeySource(url: url, cacheFilePath: cacheFile, logger: logger)
        let verifier = try IDTokenVerifier(profile: profile, keys: keys, replayCache: replayCache)
        use(verifier, as: name)
        return verifier
    }

    /// The verifier registered under `name`.
    public func verifier(_ name: String = defaultProfile) -> MultiProfileVerifier? { verifiers[name]?.verifier }

    /// The verifier under `name` and the settings it runs with.
    func registered(_ name: String) -> (verifier: MultiProfileVerifier, settings: IDTokenSettings)? {
        guard let entry = verifiers[name] else { return nil }
        var settings = settings
        if let now = entry.now { settings.now = now }
        return (entry.verifier, settings)
    }

    /// An authenticator for the verifier registered under `profile` (see ``IDTokenAuthenticator``).
    /// - Parameter nonce: where the raw nonce of the sign-in flow comes from, if the route expects one.
    public func authenticator<Context: IDTokenRequestContext>(profile: String = defaultProfile, nonce: IDTokenNonceSource? = nil,
                                                              context: Context.Type = Context.self) -> IDTokenAuthenticator<Context> {
        guard let (verifier, settings) = registered(profile) else {
            fatalError("no ID-token verifier is registered as \"\(profile)\"; call idTokens.use(…, as: \"\(profile)\") first")
        }
        return IDTokenAuthenticator(verifier: verifier, nonce: nonce, settings: settings, logger: logger)
    }

    /// The service that keeps the registered verifiers' HTTP key sources warm: add it to the application's
    /// services (or any service group) and it stops them on graceful shutdown.
    public var keyRefresh: KeyRefreshService {
        KeyRefreshService(verifiers: verifiers.values.flatMap { $0.verifier.members.map(\.verifier) }, logger: logger)
    }
}

/// What refusals carry and which time verifications run at.
public struct IDTokenSettings: Sendable {
    /// The `realm` of the `WWW-Authenticate` challenge, if any.
    public var realm: String?
    /// The `Retry-After` of a 503 (`keys_unavailable`), in seconds: by default the key sources' first retry
    /// interval.
    public var retryAfterSeconds: Int = Int(KeyCachePolicy().retryInterval.components.seconds)
    /// The time verifications run at: the system clock, unless a test fixes it.
    public var now: @Sendable () -> Date = { Date() }

    public init() {}
}

extension IDTokens {
    /// The guard that answers refusals with these settings' realm and `Retry-After`.
    public func guardMiddleware<Context: IDTokenRequestContext>(context: Context.Type = Context.self) -> IDTokenGuardMiddleware<Context> {
        IDTokenGuardMiddleware(settings: settings)
    }
}
