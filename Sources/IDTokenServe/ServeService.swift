import Foundation
import IDTokenConfiguration
import IDTokenKit
import IDTokenKitRedis
import Logging
import Synchronization

/// What a request says, as the HTTP layer read it.
package struct ServeRequest: Sendable {
    /// The request target (path and query).
    package var target: String
    package var authorization: String?
    /// The `Cookie` header(s), joined with `; `.
    package var cookie: String?
    package var nonce: String?

    package init(target: String, authorization: String? = nil, cookie: String? = nil, nonce: String? = nil) {
        self.target = target
        self.authorization = authorization
        self.cookie = cookie
        self.nonce = nonce
    }
}

/// An answer: status, headers (every value checked by ``IdentityHeaders/isSafe(_:)`` before it is sent), body.
package struct ServeResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: String
    /// The metrics slot of a `/verify` answer (see ``ServeMetrics``); nil for other paths.
    var slot: Int?
}

/// The answer to a request: ready now (the common case: keys cached, no store to ask), or after waiting for a
/// key fetch or the Redis replay store.
enum ServeDecision {
    case now(ServeResponse)
    case later(@Sendable () async -> ServeResponse)
}

/// The verification side of `idtoken serve`, without HTTP: maps a request to IDTokenKit's ``MultiProfileVerifier``
/// and its ``ProfileVerification`` to the contract's answer (DESIGN §10). It decides nothing about the token itself:
/// routing (a profile named by the path, else the token's `iss`), key refresh, the nonce, the replay cache and the
/// verified-token caches are the verifier's, as they are for `idtoken verify` and `audit` and the integrations.
///
/// A request whose answer needs no waiting (the profile's key set has the token's key, no asynchronous replay store
/// to ask) is answered on the connection's event loop; the rest wait for the key source or Redis.
package final class ServeService: Sendable {
    package let settings: ServeSettings
    package let verifier: MultiProfileVerifier
    package let metrics: ServeMetrics
    let logger: Logger
    /// The fixed time every token is judged at, when started with `--at` (tests and demonstrations only).
    let fixedTime: Double?
    private let memoryReplay: MemoryReplayCache?
    /// Whether a replay cache is in play: answers are then never cacheable.
    private let replays: Bool
    private let poller = Mutex<Task<Void, Never>?>(nil)

    /// Builds the service from a configuration file's profiles and `serve` member. Key sources are created
    /// (loading warm-start cache files; fetching starts in the background), nothing listens yet.
    /// - Throws: ``ConfigurationError`` naming the member at fault.
    package init(configuration: ConfigurationFile, settings: ServeSettings, fixedTime: Double? = nil,
                logger: Logger = Logger(label: "idtoken.serve"), keyLogger: Logger = Logger(label: "idtoken.keys")) throws(ConfigurationError) {
        self.settings = settings
        self.logger = logger
        self.fixedTime = fixedTime
        self.metrics = ServeMetrics()
        let replayCache: (any ReplayCache)?
        switch settings.replayStore {
        case nil:
            replayCache = nil
            memoryReplay = nil
        case "memory":
            let cache = MemoryReplayCache(capacity: settings.replayCapacity)
            replayCache = cache
            memoryReplay = cache
        case let url?:
            do {
                // With a fixed clock (tests) Redis's own clock is not the tokens' time: count lifetimes from now.
                replayCache = try RedisReplayCache(url: url, failureMode: settings.replayFailureMode,
                                                   expiry: fixedTime == nil ? .absolute : .relativeToNow, logger: logger)
            } catch {
                throw ConfigurationError("\"serve.replayStore\": \(error)")
            }
            memoryReplay = nil
        }
        replays = replayCache != nil
        let cache = settings.verifiedTokenCache > 0 ? VerifiedTokenCache.Configuration(capacity: settings.verifiedTokenCache) : nil
        verifier = try configuration.verifier(cache: cache, replayCache: replayCache) { entry throws(ConfigurationError) in
            let cacheFile = settings.keyCacheFiles[entry.name]
            let source: any KeySource
            do {
                source = try KeySourceResolver.resolve(entry.keys, defaultURL: entry.profile.keysURL, cachePolicy: settings.keyCachePolicy,
                                                       cacheFilePath: cacheFile, logger: keyLogger)
            } catch {
                throw ConfigurationError("profile \"\(entry.name)\" \"keys\": \(error)")
            }
            if cacheFile != nil && !(source is HTTPKeySource) {
                throw ConfigurationError("\"serve.keyCacheFiles.\(entry.name)\": the profile's keys are files, not a URL; a cache file is for fetched keys")
            }
            return source
        }
    }

    // MARK: Key sets

    /// Starts asking, every few seconds, the key sources that have no usable set yet (a source with a set
    /// refreshes it on its own).
    package func start() {
        let task = Task { [verifier] in
            while !Task.isCancelled {
                await verifier.fetchMissingKeys()
                try? await Task.sleep(for: .seconds(5))
            }
        }
        poller.withLock { $0 = task }
    }

    /// Stops the key watcher and the HTTP key sources.
    package func shutdown() async {
        poller.withLock { $0?.cancel() }
        for member in verifier.members {
            if let remote = member.verifier.keySource as? HTTPKeySource { await remote.shutdown() }
        }
    }

    /// Whether every profile has a usable key set (`/readyz`).
    package var isReady: Bool { verifier.profilesWithoutKeys.isEmpty }

    // MARK: Requests

    var now: Double { fixedTime ?? Date().timeIntervalSince1970 }

    /// Answers `request`.
    func decide(_ request: ServeRequest) -> ServeDecision {
        // On the target's bytes: comparing `Character`s would walk grapheme clusters on every request.
        var path = Substring(request.target)
        if let query = path.utf8.firstIndex(of: UInt8(ascii: "?")) { path = path[..<query] }
        let verifyPrefix = "/verify".utf8
        if path.utf8.starts(with: verifyPrefix),
           path.utf8.count == verifyPrefix.count || path.utf8[path.utf8.index(path.startIndex, offsetBy: verifyPrefix.count)] == UInt8(ascii: "/") {
            return verify(request, path: path[path.utf8.index(path.startIndex, offsetBy: verifyPrefix.count)...])
        }
        metrics.countOtherRequest()
        switch path {
        case "/healthz":
            return .now(plain(200, "ok\n"))
        case "/readyz":
            let missing = verifier.profilesWithoutKeys
            return .now(missing.isEmpty ? plain(200, "ready\n") : plain(503, "no usable keys yet: \(missing.joined(separator: ", "))\n"))
        case "/metrics":
            var response = plain(200, metrics.prometheusText(extra: keyMetrics()))
            response.headers[0].1 = "text/plain; version=0.0.4; charset=utf-8"
            return .now(response)
        default:
            return .now(plain(404, "not found: /verify, /healthz, /readyz, /metrics\n"))
        }
    }

    private func plain(_ status: Int, _ body: String) -> ServeResponse {
        ServeResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")], body: body)
    }

    private func verify(_ request: ServeRequest, path rest: Substring) -> ServeDecision {
        // `/verify/<profile>/…` picks a profile when its first segment names one; otherwise (Envoy's prefixed
        // original path, Traefik's and nginx's `/verify`) the token's issuer routes.
        var chosen: String?
        if rest.hasPrefix("/") {
            let segment = rest.dropFirst().prefix { $0 != "/" }
            if !segment.isEmpty, verifier.member(named: String(segment)) != nil { chosen = String(segment) }
        }
        guard let token = token(of: request, profile: chosen) else {
            logger.info("refused", metadata: ["code": "missing_token", "status": "401"])
            let challenge = HTTPRefusal.missingToken.wwwAuthenticate(realm: settings.realm) ?? "Bearer"
            var response = ServeResponse(status: 401, headers: [("WWW-Authenticate", challenge), ("Cache-Control", "no-store")],
                                         body: "")
            response.slot = 1
            return .now(response)
        }
        let nonce = request.nonce
        switch verifier.step(token, now: now, nonce: nonce, profile: chosen, reportsRefusals: false) {
        case .done(let outcome):
            return .now(answer(outcome, token: token, nonce: nonce))
        case .waiting(_, let rest):
            return .later { [self] in answer(await rest(), token: token, nonce: nonce) }
        }
    }

    /// The contract's answer to the verifier's outcome.
    private func answer(_ outcome: ProfileVerification, token: String, nonce: String?) -> ServeResponse {
        guard let verified = outcome.verifiedToken, let name = outcome.profile else {
            return refusal(outcome.error ?? TokenError(.malformed, "no verdict"), profile: outcome.profile)
        }
        return allow(verified, profile: name, payload: outcome.payloadSegment(of: token), replayOrNonce: replays || nonce != nil)
    }

    /// The bearer token, or the profile's cookie (the chosen profile's, else any configured cookie).
    func token(of request: ServeRequest, profile: String?) -> String? {
        if let authorization = request.authorization { return BearerToken.token(inAuthorization: authorization) }
        guard let cookieHeader = request.cookie, !settings.cookies.isEmpty else { return nil }
        let names = profile.map { settings.cookies[$0].map { [$0] } ?? [] } ?? settings.cookies.values.sorted()
        for pair in cookieHeader.split(separator: ";") {
            let trimmed = pair.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            let name = trimmed[..<equals]
            if names.contains(where: { $0 == name }) {
                let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                if !value.isEmpty { return value }
            }
        }
        return nil
    }

    // MARK: Answers

    func refusal(_ error: TokenError, profile: String?) -> ServeResponse {
        // The one classification of refusals (HTTPRefusal) that the Vapor and Hummingbird integrations answer with
        // too: 401 invalid_token, 403 insufficient_scope, 503 without a challenge (the token was not judged).
        let refusal = error.httpRefusal
        let status = refusal.status
        let code = error.code.rawValue
        var headers: [(String, String)] = [("X-Auth-Error", code), ("Cache-Control", "no-store")]
        if let challenge = refusal.wwwAuthenticate(realm: settings.realm) { headers.insert(("WWW-Authenticate", challenge), at: 0) }
        if status == 503 { headers.append(("Retry-After", String(settings.retryAfterSeconds))) }
        // The line's metadata is only built when the line is written (a refused request is the cheap path of a
        // flood of forged tokens).
        if logger.logLevel <= .info {
            var metadata: Logger.Metadata = ["code": "\(code)", "status": "\(status)",
                                             "message": "\(IdentityHeaders.encode(String(error.message.prefix(300))))"]
            if let profile { metadata["profile"] = "\(profile)" }
            if let claim = error.claim { metadata["claim"] = "\(IdentityHeaders.encode(claim))" }
            logger.info("refused", metadata: metadata)
        }
        var response = ServeResponse(status: status, headers: headers, body: "")
        response.slot = ServeMetrics.slot(error.code)
        return response
    }

    func allow(_ verified: VerifiedToken, profile name: String, payload: Substring?, replayOrNonce: Bool) -> ServeResponse {
        let claims = verified.claims
        let limit = settings.maxIdentityHeaderBytes
        var headers: [(String, String)] = []
        headers.reserveCapacity(10)
        func add(_ header: String, _ claim: String, _ value: String) -> TokenError? {
            let encoded = IdentityHeaders.encode(value)
            guard encoded.utf8.count <= limit else {
                return TokenError(.invalidClaim, claim: claim, "the \"\(claim)\" claim is longer than the service passes on (\(limit) bytes encoded); identity headers are never cut")
            }
            headers.append((header, encoded))
            return nil
        }
        if let error = add("X-Auth-Subject", "sub", verified.subject) { return refusal(error, profile: name) }
        if let error = add("X-Auth-Issuer", "iss", verified.issuer) { return refusal(error, profile: name) }
        headers.append(("X-Auth-Provider", verified.provider.rawValue))
        headers.append(("X-Auth-Profile", IdentityHeaders.encode(name)))
        if claims.contains("aud") {
            let encoded = IdentityHeaders.encodeList(claims.audience)
            guard encoded.utf8.count <= limit else {
                return refusal(TokenError(.invalidClaim, claim: "aud", "the \"aud\" claim is longer than the service passes on (\(limit) bytes encoded)"), profile: name)
            }
            headers.append(("X-Auth-Audience", encoded))
        }
        let exp = verified.expiresAt
        headers.append(("X-Auth-Expires", String(Int64(exp))))
        if let email = claims.email, claims.emailVerified == true {
            if let error = add("X-Auth-Email", "email", email) { return refusal(error, profile: name) }
        }
        // The payload segment as the token carries it: already base64url, so already a safe header value.
        if let payload, payload.utf8.count <= settings.maxClaimsHeaderBytes {
            headers.append(("X-Auth-Claims", String(payload)))
        } else {
            headers.append(("X-Auth-Claims-Omitted", "too-large"))
        }
        if replayOrNonce || settings.maxCacheAgeSeconds == 0 {
            headers.append(("Cache-Control", "no-store"))
        } else {
            let seconds = max(0, min(Int(exp - now), settings.maxCacheAgeSeconds))
            headers.append(("Cache-Control", "private, max-age=\(seconds)"))
        }
        var response = ServeResponse(status: 200, headers: headers, body: "")
        response.slot = 0
        return response
    }

    /// Key-source and cache figures for `/metrics`.
    func keyMetrics() -> String {
        var out = "# HELP idtoken_keys_usable Whether a profile has a usable key set.\n# TYPE idtoken_keys_usable gauge\n"
        var fetches = "# HELP idtoken_key_fetches_total Key set fetches started, successful or not.\n# TYPE idtoken_key_fetches_total counter\n"
        var failed = "# HELP idtoken_key_fetch_failures_total Key set fetches that failed.\n# TYPE idtoken_key_fetch_failures_total counter\n"
        var failures = "# HELP idtoken_key_fetch_consecutive_failures Failed key fetches since the last success.\n# TYPE idtoken_key_fetch_consecutive_failures gauge\n"
        var stale = "# HELP idtoken_keys_stale Whether a profile's key set is served past its expiry (stale-if-error).\n# TYPE idtoken_keys_stale gauge\n"
        var staleSeconds = "# HELP idtoken_keys_stale_seconds How long a profile's key set has been served past its expiry (0 while fresh).\n# TYPE idtoken_keys_stale_seconds gauge\n"
        var cache = "# HELP idtoken_verified_token_cache_entries Tokens in a profile's verified-token cache.\n# TYPE idtoken_verified_token_cache_entries gauge\n"
        for member in verifier.members {
            let label = "{profile=\"\(IdentityHeaders.encode(member.name))\"}"
            out += "idtoken_keys_usable\(label) \(member.verifier.keySource.currentKeys() != nil ? 1 : 0)\n"
            if let remote = member.verifier.keySource as? HTTPKeySource {
                let status = remote.status()
                fetches += "idtoken_key_fetches_total\(label) \(status.fetchCount)\n"
                failed += "idtoken_key_fetch_failures_total\(label) \(status.failureCount)\n"
                failures += "idtoken_key_fetch_consecutive_failures\(label) \(status.consecutiveFailures)\n"
                stale += "idtoken_keys_stale\(label) \(status.isStale ? 1 : 0)\n"
                staleSeconds += "idtoken_keys_stale_seconds\(label) \(status.secondsStale.rounded(.down))\n"
            }
            let count = member.verifier.verifiedTokenCache?.count ?? 0
            cache += "idtoken_verified_token_cache_entries\(label) \(count)\n"
        }
        out += fetches + failed + failures + stale + staleSeconds + cache
        if let memoryReplay {
            out += "# HELP idtoken_replay_cache_entries Tokens in the in-memory replay cache.\n# TYPE idtoken_replay_cache_entries gauge\n"
            out += "idtoken_replay_cache_entries \(memoryReplay.count)\n"
        }
        return out
    }
}
