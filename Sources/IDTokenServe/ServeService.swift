import Foundation
import IDTokenAudit
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

/// The verification side of `idtoken serve`, without HTTP: routes a request to a profile, verifies its token and
/// writes the contract's answer (DESIGN §10).
///
/// Tokens are judged by the audit's ``ProfileJudge`` — the same routing as `idtoken audit --config`: the token's
/// `iss`, read unverified, picks the profile, whose verifier then checks everything — built over each profile's
/// current key set. The judge is an immutable snapshot; when a key source's set changes (background refresh, an
/// unknown `kid` fetched, a first fetch after a failed start) a new one is built and published by bumping
/// ``generation``. A connection keeps the snapshot it last read and only takes the lock to read a new one when
/// the generation moved: a request costs one atomic load, no lock.
package final class ServeService: Sendable {
    package struct Entry: Sendable {
        package let name: String
        package let profile: Profile
        package let source: any KeySource
    }

    /// The judge over one generation of key sets.
    final class Snapshot: Sendable {
        let generation: Int
        let judge: ProfileJudge
        /// One judge per profile, for `/verify/<profile>`, sharing the profiles (and their verified-token caches).
        let single: [String: ProfileJudge]
        /// Per entry: whether its source had a usable set, and its fetch count, when this snapshot was built.
        let hadKeys: [Bool]
        let fetchCounts: [Int]

        init(generation: Int, judge: ProfileJudge, single: [String: ProfileJudge], hadKeys: [Bool], fetchCounts: [Int]) {
            self.generation = generation
            self.judge = judge
            self.single = single
            self.hadKeys = hadKeys
            self.fetchCounts = fetchCounts
        }
    }

    package let settings: ServeSettings
    package let entries: [Entry]
    package let metrics: ServeMetrics
    let logger: Logger
    /// The fixed time every token is judged at, when started with `--at` (tests and demonstrations only).
    let fixedTime: Double?
    private let replayCache: (any ReplayCache)?
    private let memoryReplay: MemoryReplayCache?
    private let snapshotBox: Mutex<Snapshot>
    let generation = Atomic<Int>(0)
    private let poller = Mutex<Task<Void, Never>?>(nil)

    /// Builds the service from a configuration file's profiles and `serve` member. Key sources are created
    /// (loading warm-start cache files; fetching starts in the background), nothing listens yet.
    /// - Throws: ``ConfigurationError`` naming the member at fault.
    package init(configuration: AuditConfiguration, settings: ServeSettings, fixedTime: Double? = nil,
                logger: Logger = Logger(label: "idtoken.serve"), keyLogger: Logger = Logger(label: "idtoken.keys")) throws(ConfigurationError) {
        self.settings = settings
        self.logger = logger
        self.fixedTime = fixedTime
        self.metrics = ServeMetrics()
        var entries: [Entry] = []
        for entry in configuration.profiles {
            let cacheFile = settings.keyCacheFiles[entry.name]
            let source: any KeySource
            do {
                source = try KeySourceResolver.resolve(entry.keys, defaultURL: entry.profile.keysURL, cachePolicy: settings.keyCachePolicy,
                                                       cacheFilePath: cacheFile,
                                                       logger: keyLogger)
            } catch {
                throw ConfigurationError("profile \"\(entry.name)\" \"keys\": \(error)")
            }
            if cacheFile != nil && !(source is HTTPKeySource) {
                throw ConfigurationError("\"serve.keyCacheFiles.\(entry.name)\": the profile's keys are files, not a URL; a cache file is for fetched keys")
            }
            entries.append(Entry(name: entry.name, profile: entry.profile, source: source))
        }
        self.entries = entries
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
                replayCache = try RedisReplayCache(url: url, failureMode: settings.replayFailureMode == "allow" ? .allow : .reject,
                                                   expiry: fixedTime == nil ? .absolute : .relativeToNow, logger: logger)
            } catch {
                throw ConfigurationError("\"serve.replayStore\": \(error)")
            }
            memoryReplay = nil
        }
        snapshotBox = Mutex(try Self.build(entries, settings: settings, generation: 0))
    }

    private static func build(_ entries: [Entry], settings: ServeSettings, generation: Int) throws(ConfigurationError) -> Snapshot {
        var profiles: [AuditProfile] = []
        var hadKeys: [Bool] = []
        var fetchCounts: [Int] = []
        let cache = settings.verifiedTokenCache > 0 ? VerifiedTokenCache.Configuration(capacity: settings.verifiedTokenCache) : nil
        for entry in entries {
            let keys = entry.source.currentKeys()
            hadKeys.append(keys != nil)
            fetchCounts.append((entry.source as? HTTPKeySource)?.status().fetchCount ?? 0)
            do {
                profiles.append(try AuditProfile(name: entry.name, profile: entry.profile, keys: keys ?? .empty, cache: cache))
            } catch {
                throw ConfigurationError("profile \"\(entry.name)\": \(error.reason)")
            }
        }
        let judge = try ProfileJudge(profiles: profiles)
        var single: [String: ProfileJudge] = [:]
        for profile in profiles { single[profile.name] = try ProfileJudge(profiles: [profile]) }
        return Snapshot(generation: generation, judge: judge, single: single, hadKeys: hadKeys, fetchCounts: fetchCounts)
    }

    // MARK: Key sets

    func currentSnapshot() -> Snapshot { snapshotBox.withLock { $0 } }

    /// Builds and publishes a new snapshot when a source's set changed since the current one was built.
    @discardableResult
    func refreshSnapshot() -> Snapshot {
        snapshotBox.withLock { current in
            var changed = false
            for (i, entry) in entries.enumerated() {
                let has = entry.source.currentKeys() != nil
                let count = (entry.source as? HTTPKeySource)?.status().fetchCount ?? 0
                if has != current.hadKeys[i] || count != current.fetchCounts[i] { changed = true }
            }
            guard changed, let next = try? Self.build(entries, settings: settings, generation: current.generation + 1) else { return current }
            current = next
            generation.store(next.generation, ordering: .releasing)
            return next
        }
    }

    /// Starts watching the key sources: a new snapshot within a second of a change, and a fetch every few seconds
    /// for a source that has no usable set (HTTPKeySource refreshes a set it has on its own).
    package func start() {
        let task = Task { [self] in
            var tick = 0
            while !Task.isCancelled {
                if tick % 5 == 0 {
                    for entry in entries where entry.source.currentKeys() == nil {
                        _ = try? await entry.source.keys(refreshingFor: nil)
                    }
                }
                refreshSnapshot()
                tick += 1
                try? await Task.sleep(for: .seconds(1))
            }
        }
        poller.withLock { $0 = task }
    }

    /// Stops the key watcher and the HTTP key sources.
    package func shutdown() async {
        poller.withLock { $0?.cancel() }
        for entry in entries {
            if let remote = entry.source as? HTTPKeySource { await remote.shutdown() }
        }
    }

    /// Whether every profile has a usable key set (`/readyz`).
    package var isReady: Bool { entries.allSatisfy { $0.source.currentKeys() != nil } }

    // MARK: Requests

    var now: Double { fixedTime ?? Date().timeIntervalSince1970 }

    /// Answers `request` with the snapshot the connection holds.
    func decide(_ request: ServeRequest, snapshot: Snapshot) -> ServeDecision {
        // On the target's bytes: comparing `Character`s would walk grapheme clusters on every request.
        var path = Substring(request.target)
        if let query = path.utf8.firstIndex(of: UInt8(ascii: "?")) { path = path[..<query] }
        let verifyPrefix = "/verify".utf8
        if path.utf8.starts(with: verifyPrefix),
           path.utf8.count == verifyPrefix.count || path.utf8[path.utf8.index(path.startIndex, offsetBy: verifyPrefix.count)] == UInt8(ascii: "/") {
            return verify(request, path: path[path.utf8.index(path.startIndex, offsetBy: verifyPrefix.count)...], snapshot: snapshot)
        }
        metrics.countOtherRequest()
        switch path {
        case "/healthz":
            return .now(plain(200, "ok\n"))
        case "/readyz":
            let missing = entries.filter { $0.source.currentKeys() == nil }.map(\.name)
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

    private func verify(_ request: ServeRequest, path rest: Substring, snapshot: Snapshot) -> ServeDecision {
        // `/verify/<profile>/…` picks a profile when its first segment names one; otherwise (Envoy's prefixed
        // original path, Traefik's and nginx's `/verify`) the token's issuer routes.
        var chosen: String?
        if rest.hasPrefix("/") {
            let segment = rest.dropFirst().prefix { $0 != "/" }
            if !segment.isEmpty, snapshot.single[String(segment)] != nil { chosen = String(segment) }
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
        let judge = chosen.map { snapshot.single[$0]! } ?? snapshot.judge
        let judgement = judge.judge(token, at: now, nonce: nonce)
        return conclude(judgement, token: token, nonce: nonce, chosen: chosen, snapshot: snapshot, mayFetch: true)
    }

    private func conclude(_ judgement: Judgement, token: String, nonce: String?, chosen: String?, snapshot: Snapshot,
                          mayFetch: Bool) -> ServeDecision {
        if let error = judgement.error {
            if mayFetch, error.code == .unknownKey, let name = judgement.profile,
               let index = entries.firstIndex(where: { $0.name == name }) {
                let kid = judgement.header?["kid"]?.string
                if !snapshot.hadKeys[index] || (kid != nil && entries[index].source is HTTPKeySource) {
                    // No key set yet, or a kid the set lacks: ask the source (which fetches at most once per
                    // cooldown for unknown kids), then judge again with what it has.
                    return .later { [self] in
                        do throws(TokenError) {
                            _ = try await entries[index].source.keys(refreshingFor: snapshot.hadKeys[index] ? kid : nil)
                        } catch {
                            return refusal(error, profile: name)
                        }
                        let next = refreshSnapshot()
                        let judge = chosen.map { next.single[$0]! } ?? next.judge
                        let again = judge.judge(token, at: now, nonce: nonce)
                        switch conclude(again, token: token, nonce: nonce, chosen: chosen, snapshot: next, mayFetch: false) {
                        case .now(let response): return response
                        case .later(let work): return await work()
                        }
                    }
                }
            }
            return .now(refusal(error, profile: judgement.profile))
        }
        guard let replayCache else { return .now(allow(judgement, token: token, replayOrNonce: nonce != nil)) }
        let claims = judgement.claims
        let entry = AuditEngine.replayEntry(token: token, issuer: claims?["iss"]?.string ?? "",
                                            exp: claims?["exp"]?.double ?? 0, leeway: judgement.leeway)
        let at = Int64(now.rounded(.down))
        if let memoryReplay {
            do throws(TokenError) {
                guard try memoryReplay.insertIfAbsentNow(entry, now: at) else { return .now(refusal(replayed(), profile: judgement.profile)) }
            } catch {
                return .now(refusal(error, profile: judgement.profile))
            }
            return .now(allow(judgement, token: token, replayOrNonce: true))
        }
        return .later { [self] in
            do throws(TokenError) {
                guard try await replayCache.insertIfAbsent(entry, now: at) else { return refusal(replayed(), profile: judgement.profile) }
            } catch {
                return refusal(error, profile: judgement.profile)
            }
            return allow(judgement, token: token, replayOrNonce: true)
        }
    }

    private func replayed() -> TokenError {
        TokenError(.replayed, "this token was presented before; the replay cache accepts each token once")
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

    func allow(_ judgement: Judgement, token: String, replayOrNonce: Bool) -> ServeResponse {
        guard let claims = judgement.claims, let name = judgement.profile,
              let entry = entries.first(where: { $0.name == name }) else {
            return refusal(TokenError(.invalidClaim, "the verified token has no claims"), profile: judgement.profile)
        }
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
        if let error = add("X-Auth-Subject", "sub", claims["sub"]?.string ?? "") { return refusal(error, profile: name) }
        if let error = add("X-Auth-Issuer", "iss", claims["iss"]?.string ?? "") { return refusal(error, profile: name) }
        headers.append(("X-Auth-Provider", entry.profile.provider.rawValue))
        headers.append(("X-Auth-Profile", IdentityHeaders.encode(name)))
        if let aud = claims["aud"] {
            let items = aud.string.map { [$0] } ?? (aud.array ?? []).compactMap(\.string)
            let encoded = IdentityHeaders.encodeList(items)
            guard encoded.utf8.count <= limit else {
                return refusal(TokenError(.invalidClaim, claim: "aud", "the \"aud\" claim is longer than the service passes on (\(limit) bytes encoded)"), profile: name)
            }
            headers.append(("X-Auth-Audience", encoded))
        }
        let exp = claims["exp"]?.double ?? 0
        headers.append(("X-Auth-Expires", String(Int64(exp))))
        if let email = claims["email"]?.string, let verified = claims["email_verified"],
           verified.bool == true || verified.string == "true" {
            if let error = add("X-Auth-Email", "email", email) { return refusal(error, profile: name) }
        }
        // The payload segment as the token carries it: already base64url, so already a safe header value.
        if let payload = Self.payloadSegment(of: token), payload.bytes <= settings.maxClaimsHeaderBytes {
            headers.append(("X-Auth-Claims", String(token[payload.range])))
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

    /// The range of a compact token's payload segment (between its first and second `.`: the token was split
    /// and verified, so it has exactly two), found with `memchr` on the token's bytes in place; and its length.
    static func payloadSegment(of token: String) -> (range: Range<String.Index>, bytes: Int)? {
        var token = token
        token.makeContiguousUTF8()
        let dots = token.utf8.withContiguousStorageIfAvailable { bytes -> (Int, Int)? in
            guard let base = bytes.baseAddress,
                  let first = ByteSearch.firstIndex(of: UInt8(ascii: "."), in: base, from: 0, to: bytes.count),
                  let second = ByteSearch.firstIndex(of: UInt8(ascii: "."), in: base, from: first + 1, to: bytes.count) else { return nil }
            return (first, second)
        }
        guard let (first, second) = dots ?? nil else { return nil }
        let utf8 = token.utf8
        return (utf8.index(utf8.startIndex, offsetBy: first + 1)..<utf8.index(utf8.startIndex, offsetBy: second), second - first - 1)
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
        let snapshot = currentSnapshot()
        for entry in entries {
            let label = "{profile=\"\(IdentityHeaders.encode(entry.name))\"}"
            out += "idtoken_keys_usable\(label) \(entry.source.currentKeys() != nil ? 1 : 0)\n"
            if let remote = entry.source as? HTTPKeySource {
                let status = remote.status()
                fetches += "idtoken_key_fetches_total\(label) \(status.fetchCount)\n"
                failed += "idtoken_key_fetch_failures_total\(label) \(status.failureCount)\n"
                failures += "idtoken_key_fetch_consecutive_failures\(label) \(status.consecutiveFailures)\n"
                stale += "idtoken_keys_stale\(label) \(status.isStale ? 1 : 0)\n"
                staleSeconds += "idtoken_keys_stale_seconds\(label) \(status.secondsStale.rounded(.down))\n"
            }
            let count = snapshot.single[entry.name]?.profiles.first?.verifier.verifiedTokenCache?.count ?? 0
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
