import Foundation
import IDTokenConfiguration
import IDTokenKit
import IDTokenKitRedis
import JOSE
import Logging
import Synchronization

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
    let memoryReplay: MemoryReplayCache?
    let redisReplay: RedisReplayCache?
    /// Whether a replay cache is in play: answers are then never cacheable.
    private let replays: Bool
    /// An allow answer's `Cache-Control` header for each `max-age` up to the setting (at most an hour), made once:
    /// an answer takes its list with a retain instead of formatting the value and allocating a list every time.
    let cacheControlHeaders: [[(String, String)]]
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
            redisReplay = nil
        case "memory":
            let cache = MemoryReplayCache(capacity: settings.replayCapacity)
            replayCache = cache
            memoryReplay = cache
            redisReplay = nil
        case let url?:
            let cache: RedisReplayCache
            do {
                // With a fixed clock (tests) Redis's own clock is not the tokens' time: count lifetimes from now.
                cache = try RedisReplayCache(url: url, failureMode: settings.replayFailureMode,
                                             expiry: fixedTime == nil ? .absolute : .relativeToNow, logger: logger)
            } catch {
                throw ConfigurationError("\"serve.replayStore\": \(error)")
            }
            replayCache = cache
            memoryReplay = nil
            redisReplay = cache
        }
        replays = replayCache != nil
        cacheControlHeaders = (0...min(max(settings.maxCacheAgeSeconds, 0), 3600)).map { [("Cache-Control", "private, max-age=\($0)")] }
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
        if let name = settings.appCheckProfile, verifier.member(named: name)?.verifier.profile.provider != .firebaseAppCheck {
            throw ConfigurationError("\"serve.appCheck.profile\": the profile \"\(name)\" is not a firebase-app-check profile")
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
    /// - Parameters:
    ///   - batching: whether the door can verify the ID token's signature with others (``ServeDecision/signature(_:then:)``);
    ///     without, it is verified here.
    ///   - lentBearerToken: the `Authorization: Bearer` token's bytes, lent for the call, when the request
    ///     ``ServeRequest/lendsBearerToken``: a token seen before is answered from the verified-token cache by them,
    ///     and a string is made of the token only where its way outlasts the call.
    func decide(_ request: ServeRequest, batching: Bool = false, lentBearerToken: TokenBytes? = nil) -> ServeDecision {
        // On the target's bytes in place: comparing `Character`s would walk grapheme clusters on every request, and
        // the generic UTF-8 view's searches cost several times a memchr.
        var path = Self.originForm(Substring(request.target))
        let (query, isVerify) = path.withUTF8 { bytes -> (Int?, Bool) in
            guard let base = bytes.baseAddress else { return (nil, false) }
            let query = ByteSearch.firstIndex(of: UInt8(ascii: "?"), in: base, from: 0, to: bytes.count)
            let end = query ?? bytes.count
            let prefix: StaticString = "/verify"
            return (query, end >= 7 && ByteSearch.equal(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[0..<7])),
                                                        UnsafeRawBufferPointer(start: prefix.utf8Start, count: 7))
                && (end == 7 || bytes[7] == UInt8(ascii: "/")))
        }
        if let query { path = path[..<path.utf8.index(path.startIndex, offsetBy: query)] }
        if isVerify {
            return verify(request, path: path[path.utf8.index(path.startIndex, offsetBy: 7)...], batching: batching,
                          lentBearerToken: lentBearerToken)
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

    /// The answer to `request` for a caller that can wait for it (the service's tests, one task a request): decided
    /// as the doors decide, and counted in the same metrics.
    package func respond(to request: ServeRequest) async -> ServeResponse {
        let started = ContinuousClock.now
        let response = await Self.response(of: decide(request))
        if let slot = response.slot {
            let elapsed = ContinuousClock.now - started
            let nanoseconds = UInt64(max(0, elapsed.components.seconds)) * 1_000_000_000 + UInt64(max(0, elapsed.components.attoseconds / 1_000_000_000))
            metrics.record(slot: slot, nanoseconds: nanoseconds)
        }
        return response
    }

    /// The response a decision comes to, for a door that waits for it; a signature left pending is verified here,
    /// on its own.
    static func response(of decision: ServeDecision) async -> ServeResponse {
        switch decision {
        case .now(let ready): return ready
        case .later(let work): return await work()
        case .signature(let pending, let then):
            return await response(of: then(pending.finish(signatureValid: pending.verifySignature())))
        }
    }

    /// The path of a request target: the target itself in origin form (`/verify?…`); in absolute form
    /// (`http://host/verify`, which RFC 9112 §3.2.2 requires a server to accept), what follows the authority, which an
    /// origin server ignores; `/` when nothing does. Any other form is returned as it is (and answered 404).
    static func originForm(_ target: Substring) -> Substring {
        guard target.utf8.first != UInt8(ascii: "/") else { return target }
        for scheme in ["http://", "https://"] where target.utf8.count >= scheme.utf8.count {
            let end = target.utf8.index(target.startIndex, offsetBy: scheme.utf8.count)
            guard target[..<end].lowercased() == scheme else { continue }
            let rest = target[end...]
            guard let slash = rest.utf8.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) else { return "/" }
            return rest[slash] == "/" ? rest[slash...] : Substring("/" + rest[slash...])
        }
        return target
    }

    func plain(_ status: Int, _ body: String) -> ServeResponse {
        ServeResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")], body: body)
    }

    private func verify(_ request: ServeRequest, path rest: Substring, batching: Bool, lentBearerToken: TokenBytes?) -> ServeDecision {
        // `/verify/<profile>/…` picks a profile when its first segment names one; otherwise (Envoy's prefixed
        // original path, Traefik's and nginx's `/verify`) the token's issuer routes.
        // On the path's bytes, as `decide` reads the target (Envoy's original paths make this every request's way).
        var rest = rest
        let chosen = rest.withUTF8 { bytes -> String? in
            guard let base = bytes.baseAddress, bytes.count > 1, base[0] == UInt8(ascii: "/") else { return nil }
            let end = ByteSearch.firstIndex(of: UInt8(ascii: "/"), in: base, from: 1, to: bytes.count) ?? bytes.count
            guard end > 1 else { return nil }
            let segment = String(decoding: UnsafeBufferPointer(rebasing: bytes[1..<end]), as: UTF8.self)
            return verifier.member(named: segment) != nil ? segment : nil
        }
        assert(request.lendsBearerToken == (lentBearerToken != nil), "a request that lends its token comes with the token's bytes")
        if request.lendsBearerToken, let lentBearerToken {
            return verify(lentBearerToken, of: request, profile: chosen, batching: batching)
        }
        guard let token = token(of: request, profile: chosen) else {
            logger.info("refused", metadata: ["code": "missing_token", "status": "401"])
            let challenge = HTTPRefusal.missingToken.wwwAuthenticate(realm: settings.realm) ?? "Bearer"
            var response = ServeResponse(status: 401, headers: [("WWW-Authenticate", challenge), ("Cache-Control", "no-store")],
                                         body: "")
            response.slot = 1
            return .now(response)
        }
        return verify(token, of: request, profile: chosen, batching: batching)
    }

    /// The request's way once its ID token is found: the App Check token first when the service requires one, then the
    /// ID token.
    private func verify<Token: TokenText>(_ token: Token, of request: ServeRequest, profile chosen: String?,
                                          batching: Bool) -> ServeDecision {
        let nonce = request.nonce
        guard let appCheckProfile = settings.appCheckProfile else {
            return idToken(token, profile: chosen, nonce: nonce, appID: nil, batching: batching)
        }
        // The ID token waits for the App Check token's verdict, which may come after this call: it is held as text.
        let token = token.text
        // The App Check token first: a request from something that is not the app is refused before its ID token is
        // judged. Each token's refusal is answered as the contract answers it, and `X-Auth-Error-Token` says which.
        guard let appCheck = request.appCheck?.trimmingHTTPWhitespace(), !appCheck.isEmpty else {
            logger.info("refused", metadata: ["code": "missing_app_check_token", "status": "401"])
            let challenge = HTTPRefusal.missingToken.wwwAuthenticate(realm: settings.realm) ?? "Bearer"
            var response = ServeResponse(status: 401, headers: [("WWW-Authenticate", challenge), ("X-Auth-Error-Token", "app-check"),
                                                                ("Cache-Control", "no-store")], body: "")
            response.slot = 1
            return .now(response)
        }
        let profile = chosen
        // With a batching door, the App Check token's signature is verified with the others of its cycle, then the
        // ID token's with those of a later one: both are RS256 under Firebase's RSA-2048 keys.
        guard batching else {
            return afterAppCheck(verifier.step(appCheck, now: now, nonce: nil, profile: appCheckProfile, reportsRefusals: false),
                                 token: token, profile: profile, nonce: nonce, batching: false)
        }
        switch verifier.prepare(appCheck, now: now, nonce: nil, profile: appCheckProfile, reportsRefusals: false) {
        case .decided(let step):
            return afterAppCheck(step, token: token, profile: profile, nonce: nonce, batching: true)
        case .signature(let pending):
            return .signature(pending) { [self] step in
                afterAppCheck(step, token: token, profile: profile, nonce: nonce, batching: true)
            }
        }
    }

    /// The ID token's way once the App Check token's way stands at `step`.
    private func afterAppCheck(_ step: MultiProfileVerifier.Step, token: String, profile: String?, nonce: String?,
                               batching: Bool) -> ServeDecision {
        switch step {
        case .done(let outcome):
            return afterAppCheck(outcome, token: token, profile: profile, nonce: nonce, batching: batching)
        case .waiting(_, let rest):
            return .later { [self] in
                await Self.response(of: afterAppCheck(await rest(), token: token, profile: profile, nonce: nonce, batching: false))
            }
        }
    }

    /// The ID token's way once the App Check token has been judged.
    private func afterAppCheck(_ outcome: ProfileVerification, token: String, profile: String?, nonce: String?,
                               batching: Bool) -> ServeDecision {
        guard let verified = outcome.verifiedToken else {
            var response = refusal(outcome.error ?? TokenError(.malformed, "no verdict"), profile: outcome.profile)
            response.headers.append(("X-Auth-Error-Token", "app-check"))
            return .now(response)
        }
        return idToken(token, profile: profile, nonce: nonce, appID: verified.subject, batching: batching)
    }

    /// The ID token's verification and the contract's answer; `appID` is the verified App Check token's app.
    private func idToken<Token: TokenText>(_ token: Token, profile chosen: String?, nonce: String?, appID: String?,
                                           batching: Bool = false) -> ServeDecision {
        let nonceValue = nonce.map { Nonce($0) }
        guard batching else { return decision(verifier.step(token, now: now, nonce: nonceValue, profile: chosen, reportsRefusals: false), token: token, nonce: nonce, appID: appID) }
        switch verifier.prepare(token, now: now, nonce: nonceValue, profile: chosen, reportsRefusals: false) {
        case .decided(let step):
            return decision(step, token: token, nonce: nonce, appID: appID)
        case .signature(let pending):
            // Answered after this call, once the cycle's signatures are verified: the token is held as text, the split's
            // own when it was split from text (see MultiProfileVerifier's split), so that no second string is made.
            let text = pending.jws.token
            return .signature(pending) { [self] step in decision(step, token: text, nonce: nonce, appID: appID) }
        }
    }

    /// The ID token's answer from where its way stands.
    private func decision<Token: TokenText>(_ step: consuming MultiProfileVerifier.Step, token: Token, nonce: String?, appID: String?) -> ServeDecision {
        switch consume step {
        case .done(let outcome):
            return .now(answer(outcome, token: token, nonce: nonce, appID: appID))
        case .waiting(_, let rest):
            let text = token.text
            return .later { [self] in answer(await rest(), token: text, nonce: nonce, appID: appID) }
        }
    }

    /// The contract's answer to the verifier's outcome.
    private func answer<Token: TokenText>(_ outcome: consuming ProfileVerification, token: Token, nonce: String?, appID: String?) -> ServeResponse {
        // The verified token moved out of the outcome, not copied (a known token's answer comes this way every request).
        guard let name = outcome.profile, let verified = outcome.verifiedToken.take() else {
            var response = refusal(outcome.error ?? TokenError(.malformed, "no verdict"), profile: outcome.profile)
            if appID != nil { response.headers.append(("X-Auth-Error-Token", "id-token")) }
            return response
        }
        guard let appID else {
            return allow(verified, profile: name, token: token, replayOrNonce: replays || nonce != nil)
        }
        // An App Check token sent as the ID token (its issuer routed it to the App Check profile) identifies no user.
        guard name != settings.appCheckProfile else {
            let header = settings.appCheckHeader
            var response = refusal(TokenError(.wrongIssuer, claim: "iss", "an App Check token was sent where the ID token belongs; send the ID token in Authorization and the App Check token in \(header)"),
                                   profile: name)
            response.headers.append(("X-Auth-Error-Token", "id-token"))
            return response
        }
        var response = allow(verified, profile: name, token: token, replayOrNonce: replays || nonce != nil)
        if response.status == 200 { response.headers.append(("X-Auth-App-Id", IdentityHeaders.encode(appID))) }
        return response
    }

    /// The bearer token, or the profile's cookie (the chosen profile's, else any configured cookie).
    func token(of request: ServeRequest, profile: String?) -> String? {
        if request.hasAuthorization { return request.authorizationToken }
        guard let cookieHeader = request.cookie, !settings.cookies.isEmpty else { return nil }
        let names = profile.map { settings.cookies[$0].map { [$0] } ?? [] } ?? settings.cookies.values.sorted()
        return Self.cookie(named: names, in: cookieHeader)
    }

    /// The first non-empty value of a cookie named one of `names` in a `Cookie` header (`a=1; __session=…`, RFC 6265
    /// §5.4): pairs split at `;`, the spaces before a name dropped, the name compared byte for byte (cookie names are
    /// ASCII tokens), the optional whitespace around the value dropped.
    ///
    /// Byte-wise: splitting a header that holds a session cookie of a kilobyte into `Character`s cost `idtoken serve`
    /// more than the token's RSA verify (BENCHMARKS.md, "Session cookies and App Check tokens read byte-wise").
    package static func cookie(named names: [String], in header: String) -> String? {
        var header = header
        return header.withUTF8 { bytes -> String? in
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
                defer { start = end + 1 }
                var name = start
                while name < end && bytes[name] == UInt8(ascii: " ") { name += 1 }
                guard let equals = bytes[name..<end].firstIndex(of: UInt8(ascii: "=")) else { continue }
                let found = UnsafeBufferPointer(rebasing: bytes[name..<equals])
                guard names.contains(where: { $0.utf8.elementsEqual(found) }) else { continue }
                let value = HTTPWhitespace.trimming(equals + 1..<end, of: UnsafeRawBufferPointer(bytes))
                if !value.isEmpty { return String(decoding: UnsafeBufferPointer(rebasing: bytes[value]), as: UTF8.self) }
            }
            return nil
        }
    }
}
