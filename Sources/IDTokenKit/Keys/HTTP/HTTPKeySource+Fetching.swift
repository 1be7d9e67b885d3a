import AsyncHTTPClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Fetching a key set over HTTPS: the request with its limits (time, size, redirects), the answer read as a
/// JWKS or a kid → certificate map, and the new snapshot published with its cache lifetime.
extension HTTPKeySource {
    func fetch(reason: String) async throws(KeyFetchError) -> Snapshot {
        logger.debug("fetching key set", metadata: ["reason": "\(reason)"])
        do {
            let keysURL = discoveryIssuer == nil ? url : try await discoverKeySet()
            let (body, headers) = try await download(keysURL)
            let keys = try Self.parseKeys(body, source: keysURL.absoluteString)
            let now = clock.now()
            let lifetime = cachePolicy.lifetime(cacheControl: headers[canonicalForm: "cache-control"].map(String.init),
                                                age: headers.first(name: "age"), expires: headers.first(name: "expires"),
                                                date: headers.first(name: "date"), now: now)
            var snapshot = makeSnapshot(keys: keys, body: body, fetchedAt: now, expiresAt: now + lifetime, fromCacheFile: false)
            let previous = state.withLockedValue { s -> Snapshot? in
                let previous = s.snapshot
                // The same keys as before: keep the set verifiers and their verified-token caches know (a cached
                // token names its key by identity), with the new lifetime.
                if let kept = previous?.keys, kept.hasSameKeys(as: snapshot.keys) { snapshot.keys = kept }
                publish(snapshot, into: &s)
                s.inFlight = nil
                s.consecutiveFailures = 0
                // A fetch the background loop did not start (an unknown kid, a caller without keys, refresh())
                // may bring a shorter lifetime than the set the loop is sleeping on: wake it, or the new set would
                // go stale before anyone refreshes it.
                if let wake = s.loopSleepsUntil, snapshot.refreshAt < wake, !s.isShutDown {
                    s.refreshTask?.cancel()
                    s.loopSleepsUntil = nil
                    s.refreshTask = makeRefreshLoop()
                }
                return previous
            }
            logFetched(snapshot, previous: previous, lifetime: lifetime)
            if let cacheFilePath {
                do {
                    try KeyCacheFile(url: url.absoluteString, fetchedAt: now, expiresAt: now + lifetime, body: body)
                        .write(path: cacheFilePath)
                } catch {
                    logger.warning("could not write the key cache file", metadata: ["path": "\(cacheFilePath)", "error": "\(error)"])
                }
            }
            return snapshot
        } catch {
            let failure = error
            let now = clock.now()
            let serving = state.withLockedValue { s -> Snapshot? in
                s.inFlight = nil
                s.lastFailureAt = now
                s.lastError = failure
                s.consecutiveFailures += 1
                s.failureCount += 1
                return s.snapshot.flatMap { now < $0.usableUntil ? $0 : nil }
            }
            if let serving {
                logger.warning("key set refresh failed; serving the last good set", metadata: [
                    "error": "\(failure.message)", "fetched_at": "\(UnixTime.iso8601(serving.fetchedAt))",
                    "stale": "\(now >= serving.expiresAt)", "usable_until": "\(UnixTime.iso8601(serving.usableUntil))",
                ])
            } else {
                logger.error("key set fetch failed and no usable keys are cached", metadata: ["error": "\(failure.message)"])
            }
            throw failure
        }
    }

    func logFetched(_ snapshot: Snapshot, previous: Snapshot?, lifetime: Double) {
        let new = Dictionary(snapshot.keys.keys.map { ($0.kid ?? "", $0.thumbprint) }, uniquingKeysWith: { a, _ in a })
        let old = previous.map { Dictionary($0.keys.keys.map { ($0.kid ?? "", $0.thumbprint) }, uniquingKeysWith: { a, _ in a }) }
        var metadata: Logger.Metadata = ["kids": "\(snapshot.keys.kids.joined(separator: ","))", "lifetime_s": "\(Int(lifetime))"]
        if !snapshot.keys.rejected.isEmpty { metadata["rejected"] = "\(snapshot.keys.rejected.map(\.description))" }
        guard let old else {
            logger.info("key set loaded", metadata: metadata)
            return
        }
        let added = new.keys.filter { old[$0] == nil }.sorted()
        let removed = old.keys.filter { new[$0] == nil }.sorted()
        let changed = new.keys.filter { old[$0] != nil && old[$0] != new[$0] }.sorted()
        if added.isEmpty && removed.isEmpty && changed.isEmpty {
            logger.debug("key set refreshed, unchanged", metadata: metadata)
        } else {
            metadata["added"] = "\(added.joined(separator: ","))"
            metadata["removed"] = "\(removed.joined(separator: ","))"
            if !changed.isEmpty { metadata["changed"] = "\(changed.joined(separator: ","))" }
            logger.info("key set rotated", metadata: metadata)
        }
    }

    /// The set in a body; an empty usable set is a failure, so that a broken publication never replaces
    /// good keys.
    static func parseKeys(_ body: [UInt8], source: String) throws(KeyFetchError) -> JWKSet {
        let keys: JWKSet
        do { keys = try JWKSet.parse(body) } catch {
            throw KeyFetchError(.malformed, "\(source) did not return a key set: \(error.reason)")
        }
        guard !keys.isEmpty else {
            let reasons = keys.rejected.isEmpty ? "it lists no keys" : keys.rejected.map(\.description).joined(separator: "; ")
            throw KeyFetchError(.noUsableKeys, "\(source) holds no usable key: \(reasons)")
        }
        return keys
    }

    /// The key set an issuer's discovery document names (OpenID Connect Discovery 1.0), read again on every fetch so
    /// that a moved `jwks_uri` is followed: the document's `issuer` must be the one it was fetched for, exactly
    /// (§4.3; otherwise a document could speak for another issuer), and `jwks_uri` must pass the transport rule.
    func discoverKeySet() async throws(KeyFetchError) -> KeySetURL {
        let (body, _) = try await download(url)
        let document: JSONObject
        do { document = try JSONObject.parse(body) } catch {
            throw KeyFetchError(.malformed, "\(url) is not an OpenID Connect discovery document: \(error)")
        }
        let expected = discoveryIssuer ?? ""
        guard let issuer = document["issuer"]?.string, issuer == expected || issuer == expected + "/" else {
            let named = document["issuer"].map { $0.string.map { "\"\($0)\"" } ?? "a \($0.kind)" } ?? "no issuer"
            throw KeyFetchError(.malformed, "\(url) names \(named), not the issuer \"\(expected)\" it was fetched for; a discovery document must name its own issuer (OpenID Connect Discovery §4.3)")
        }
        guard let jwksURI = document["jwks_uri"]?.string else {
            throw KeyFetchError(.malformed, "\(url) has no \"jwks_uri\" string")
        }
        let keysURL: KeySetURL
        do { keysURL = try KeySetURL(jwksURI) } catch {
            throw KeyFetchError(.insecureURL, "\(url) names the key set \(jwksURI): \(error.message)")
        }
        let previous = state.withLockedValue { s -> KeySetURL? in
            defer { s.discoveredKeysURL = keysURL }
            return s.discoveredKeysURL
        }
        if previous != keysURL {
            logger.info("discovery document names the key set", metadata: ["jwks_uri": "\(jwksURI)", "previous": "\(previous?.absoluteString ?? "none")"])
        }
        return keysURL
    }

    /// One GET of `target`, bounded by the total timeout from the first byte sent to the last received.
    func download(_ target: KeySetURL) async throws(KeyFetchError) -> ([UInt8], HTTPHeaders) {
        let url = target
        let total = limits.totalTimeout
        do {
            return try await withThrowingTaskGroup(of: ([UInt8], HTTPHeaders)?.self) { group in
                group.addTask { try await self.get(url, deadline: .now() + Self.timeAmount(total)) }
                group.addTask {
                    try await Task.sleep(for: total)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else {
                    throw KeyFetchError(.timedOut, "\(url) did not answer within \(Self.describe(total))")
                }
                return result
            }
        } catch let error as KeyFetchError {
            throw error
        } catch let error as HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout:
                throw KeyFetchError(.timedOut, "\(url) did not answer within \(Self.describe(total))")
            case .connectTimeout:
                throw KeyFetchError(.timedOut, "could not connect to \(url.host) within \(Self.describe(limits.connectTimeout))")
            default:
                throw KeyFetchError(.transport, "fetching \(url) failed: \(error)")
            }
        } catch is CancellationError {
            throw KeyFetchError(.shutDown, "fetching \(url) was cancelled")
        } catch {
            throw KeyFetchError(.transport, "fetching \(url) failed: \(error)")
        }
    }

    func get(_ url: KeySetURL, deadline: NIODeadline) async throws -> ([UInt8], HTTPHeaders) {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "IDTokenKit")
        let response = try await client.execute(request, deadline: deadline, logger: logger)
        guard response.status == .ok else {
            if (300..<400).contains(response.status.code), let location = response.headers.first(name: "location") {
                throw KeyFetchError(.httpStatus, "\(url) answered \(response.status.code) redirecting to \(location); "
                                    + "redirects are not followed, configure the final URL")
            }
            throw KeyFetchError(.httpStatus, "\(url) answered HTTP \(response.status.code) \(response.status.reasonPhrase)")
        }
        let limit = limits.maximumBodyBytes
        if let declared = response.headers.first(name: "content-length").flatMap(Int.init), declared > limit {
            throw KeyFetchError(.tooLarge, "\(url) sent \(declared) bytes; the limit is \(limit)")
        }
        var body: [UInt8] = []
        for try await chunk in response.body {
            guard body.count + chunk.readableBytes <= limit else {
                // Leaving the loop drops the stream, which closes the connection: the rest is never read.
                throw KeyFetchError(.tooLarge, "\(url) sent more than \(limit) bytes")
            }
            body.append(contentsOf: chunk.readableBytesView)
        }
        return (body, response.headers)
    }
}
