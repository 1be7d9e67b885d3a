import Foundation
import IDTokenKit
import IDTokenKitRedis

/// The `serve` member of a configuration file (DESIGN §10): how `idtoken serve` listens, its limits, and what
/// it reads from requests. Every member is optional; an unknown member or a value out of range is refused with
/// its name, so that the service never starts on a configuration it misread.
///
/// ```json
/// "serve": {
///   "listen": "127.0.0.1:8080",
///   "maxHeaderBytes": 16384, "maxConnections": 10000, "idleTimeoutSeconds": 60, "requestTimeoutSeconds": 10,
///   "cookies": {"firebase-session": "__session"},
///   "nonceHeader": "X-IDToken-Nonce",
///   "replayStore": "memory", "replayFailureMode": "reject", "replayCapacity": 1000000,
///   "verifiedTokenCache": 8192,
///   "keyCacheFiles": {"firebase": "/var/cache/idtoken/firebase.json"},
///   "realm": "idtoken", "maxCacheAgeSeconds": 300, "maxIdentityHeaderBytes": 1024, "maxClaimsHeaderBytes": 8192,
///   "retryAfterSeconds": 5, "shutdownGraceSeconds": 10, "unknownKidCooldownSeconds": 30, "keyRetryIntervalSeconds": 10,
///   "minKeyLifetimeSeconds": 300,
///   "appCheck": {"profile": "app-check", "header": "X-Firebase-AppCheck"}
/// }
/// ```
///
/// `appCheck` makes every `/verify` request carry a Firebase App Check token beside the ID token: `profile` names
/// the configuration's `firebase-app-check` profile, `header` the request header (default `X-Firebase-AppCheck`).
package struct ServeSettings: Sendable, Equatable {
    package var host = "127.0.0.1"
    package var port = 8080
    /// The most bytes of a request's head, and of its head and the body it declares (the body is never read, only
    /// skipped); more is answered 431 (413 for the body) and the connection closed.
    package var maxHeaderBytes = 16 * 1024
    /// Open connections at once; further ones are closed as soon as they are accepted.
    package var maxConnections = 10_000
    /// A connection with no traffic for this long is closed.
    package var idleTimeoutSeconds = 60
    /// A request's header must arrive within this long of its first byte (a client sending one byte a second is
    /// answered 408 and closed).
    package var requestTimeoutSeconds = 10
    /// Profile name → the cookie that carries its token (Firebase session cookies), read when there is no
    /// `Authorization: Bearer` header.
    package var cookies: [String: String] = [:]
    /// The request header holding the raw nonce, if the sign-in flow used one.
    package var nonceHeader = "X-IDToken-Nonce"
    /// nil (no replay check), `memory`, or a `redis://` URL.
    package var replayStore: String?
    /// Redis failure mode: `reject` (default) or `allow`.
    package var replayFailureMode = RedisReplayCacheConfiguration.FailureMode.reject
    /// Tokens the in-memory replay cache holds at most.
    package var replayCapacity = 1_000_000
    /// Verified tokens remembered per profile so that a repeated token skips the signature check (0: off).
    package var verifiedTokenCache = 8192
    /// Profile name → warm-start key cache file (read at start, rewritten after each fetch).
    package var keyCacheFiles: [String: String] = [:]
    /// The realm of `WWW-Authenticate` challenges.
    package var realm = "idtoken"
    /// The longest `Cache-Control: max-age` given on an allowed answer.
    package var maxCacheAgeSeconds = 300
    /// The longest encoded identity header value (subject, issuer, audience, email); a longer one refuses the
    /// request with `invalid_claim` rather than being cut (see ``IdentityHeaders``).
    package var maxIdentityHeaderBytes = 1024
    /// The longest `X-Auth-Claims` value; a larger payload is left out and `X-Auth-Claims-Omitted` says so.
    package var maxClaimsHeaderBytes = 8192
    /// `Retry-After` on a 503 answer.
    package var retryAfterSeconds = 5
    /// The shortest time between two fetches caused by unknown `kid`s (DESIGN §5's cooldown).
    package var unknownKidCooldownSeconds = 30
    /// After a failed key fetch, the wait before the next attempt (it grows after repeated failures).
    package var keyRetryIntervalSeconds = 10
    /// The shortest time a fetched key set is cached, whatever its `Cache-Control` says (Apple's says not to
    /// cache at all); also the longest wait between retries after repeated failures.
    package var minKeyLifetimeSeconds = 300
    /// On SIGTERM or SIGINT, how long in-flight requests have to finish before the remaining connections close.
    package var shutdownGraceSeconds = 10
    /// Where the gRPC door (Envoy's `ext_authz` over gRPC) listens, when it does: `serve.grpcListen` or
    /// `--grpc-listen`; it needs a build with the `GRPC` package trait.
    package var grpcListen: ListenAddress?
    /// Whether the gRPC door's allow answers ask Envoy to remove the `authorization` header before the request goes
    /// upstream (`headers_to_remove`).
    package var grpcRemovesAuthorization = false
    /// The `firebase-app-check` profile every `/verify` request's App Check token must pass, when one is required.
    package var appCheckProfile: String?
    /// The header that carries the App Check token.
    package var appCheckHeader = "X-Firebase-AppCheck"
    /// How the HTTP door computes the RS256 signatures it verifies together, one batch per event loop and read
    /// cycle (``SignatureBatch``): by default the IFMA kernel where the CPU has it; `.libcrypto` (every CPU without
    /// IFMA) verifies each token where its request is read, without batching.
    package var signatures: RSABatchImplementation = .selected

    package init() {}

    /// The key cache rules of DESIGN §5 with this service's cooldown and retry interval; background refresh on.
    package var keyCachePolicy: KeyCachePolicy {
        var policy = KeyCachePolicy()
        policy.refreshesInBackground = true
        policy.unknownKidCooldown = .seconds(unknownKidCooldownSeconds)
        policy.retryInterval = .seconds(keyRetryIntervalSeconds)
        policy.minimumLifetime = .seconds(minKeyLifetimeSeconds)
        return policy
    }

    static let members = ["listen", "maxHeaderBytes", "maxConnections", "idleTimeoutSeconds", "requestTimeoutSeconds",
                          "cookies", "nonceHeader", "replayStore", "replayFailureMode", "replayCapacity",
                          "verifiedTokenCache", "keyCacheFiles", "realm", "maxCacheAgeSeconds", "maxIdentityHeaderBytes",
                          "maxClaimsHeaderBytes", "retryAfterSeconds", "shutdownGraceSeconds",
                          "unknownKidCooldownSeconds", "keyRetryIntervalSeconds", "minKeyLifetimeSeconds",
                          "grpcListen", "grpcRemoveAuthorization", "appCheck"]

    /// Reads the `serve` member (nil: all defaults). Profile names in `cookies` and `keyCacheFiles` must name
    /// profiles of the configuration; relative cache-file paths are resolved against `baseDirectory`.
    package static func parse(_ tree: JSONTree?, profileNames: [String], baseDirectory: String) throws(ConfigurationError) -> ServeSettings {
        var settings = ServeSettings()
        guard let tree else { return settings }
        guard let members = tree.objectMembers else { throw ConfigurationError("\"serve\" must be a JSON object") }
        for (key, _) in members where !Self.members.contains(key) {
            throw ConfigurationError("\"serve\" has an unknown member \"\(key)\" (known: \(Self.members.joined(separator: ", ")))")
        }
        func integer(_ key: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
            guard let value = tree[key] else { return nil }
            guard let number = value.int64, range.contains(Int(number)) else {
                throw ConfigurationError("\"serve.\(key)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return Int(number)
        }
        func string(_ key: String) throws(ConfigurationError) -> String? {
            guard let value = tree[key] else { return nil }
            guard let text = value.string, !text.isEmpty else { throw ConfigurationError("\"serve.\(key)\" must be a non-empty string") }
            return text
        }
        func byProfile(_ key: String) throws(ConfigurationError) -> [String: String] {
            guard let value = tree[key] else { return [:] }
            guard let members = value.objectMembers else {
                throw ConfigurationError("\"serve.\(key)\" must be an object of profile name → string")
            }
            var out: [String: String] = [:]
            for (name, item) in members {
                guard profileNames.contains(name) else {
                    throw ConfigurationError("\"serve.\(key).\(name)\" names no profile (profiles: \(profileNames.joined(separator: ", ")))")
                }
                guard let text = item.string, !text.isEmpty else { throw ConfigurationError("\"serve.\(key).\(name)\" must be a non-empty string") }
                out[name] = text
            }
            return out
        }
        if let listen = try string("listen") {
            do throws(ConfigurationError) { (settings.host, settings.port) = try parseListen(listen) } catch {
                throw ConfigurationError("\"serve.listen\": \(error.reason)")
            }
        }
        if let listen = try string("grpcListen") {
            do throws(ConfigurationError) { settings.grpcListen = ListenAddress(try parseListen(listen)) } catch {
                throw ConfigurationError("\"serve.grpcListen\": \(error.reason)")
            }
        }
        if let value = tree["grpcRemoveAuthorization"] {
            guard case .bool(let flag) = value else { throw ConfigurationError("\"serve.grpcRemoveAuthorization\" must be true or false") }
            settings.grpcRemovesAuthorization = flag
        }
        if let value = tree["appCheck"] {
            guard let members = value.objectMembers else {
                throw ConfigurationError("\"serve.appCheck\" must be an object: {\"profile\": NAME, \"header\": \"X-Firebase-AppCheck\"}")
            }
            for (key, _) in members where key != "profile" && key != "header" {
                throw ConfigurationError("\"serve.appCheck\" has an unknown member \"\(key)\" (known: profile, header)")
            }
            guard let profile = value["profile"]?.string, profileNames.contains(profile) else {
                throw ConfigurationError("\"serve.appCheck.profile\" must name the configuration's firebase-app-check profile (profiles: \(profileNames.joined(separator: ", ")))")
            }
            settings.appCheckProfile = profile
            if let header = value["header"] {
                guard let name = header.string, !name.isEmpty, name.utf8.allSatisfy(HeaderBytes.isTokenCharacter),
                      name.lowercased() != "authorization", name.lowercased() != "cookie" else {
                    throw ConfigurationError("\"serve.appCheck.header\" must be a header name other than Authorization and Cookie")
                }
                settings.appCheckHeader = name
            }
        }
        if let v = try integer("maxHeaderBytes", 1024...(1 << 20)) { settings.maxHeaderBytes = v }
        if let v = try integer("maxConnections", 1...1_000_000) { settings.maxConnections = v }
        if let v = try integer("idleTimeoutSeconds", 1...86_400) { settings.idleTimeoutSeconds = v }
        if let v = try integer("requestTimeoutSeconds", 1...3600) { settings.requestTimeoutSeconds = v }
        settings.cookies = try byProfile("cookies")
        for (name, cookie) in settings.cookies where !cookie.utf8.allSatisfy(HeaderBytes.isTokenCharacter) {
            throw ConfigurationError("\"serve.cookies.\(name)\": \"\(cookie)\" is not a cookie name")
        }
        if let v = try string("nonceHeader") {
            guard v.utf8.allSatisfy(HeaderBytes.isTokenCharacter) else { throw ConfigurationError("\"serve.nonceHeader\" is not a header name") }
            settings.nonceHeader = v
        }
        if let v = try string("replayStore") {
            guard v == "memory" || v.hasPrefix("redis://") else {
                throw ConfigurationError("\"serve.replayStore\" must be \"memory\" or a redis:// URL")
            }
            settings.replayStore = v
        }
        if let v = try string("replayFailureMode") {
            guard let mode = RedisReplayCacheConfiguration.FailureMode(rawValue: v) else {
                throw ConfigurationError("\"serve.replayFailureMode\" must be \"reject\" or \"allow\"")
            }
            settings.replayFailureMode = mode
        }
        if let v = try integer("replayCapacity", 1...100_000_000) { settings.replayCapacity = v }
        if let v = try integer("verifiedTokenCache", 0...10_000_000) { settings.verifiedTokenCache = v }
        settings.keyCacheFiles = try byProfile("keyCacheFiles").mapValues {
            $0.hasPrefix("/") ? $0 : (baseDirectory as NSString).appendingPathComponent($0)
        }
        if let v = try string("realm") {
            guard v.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
                throw ConfigurationError("\"serve.realm\" must be printable ASCII without quotes or backslashes")
            }
            settings.realm = v
        }
        if let v = try integer("maxCacheAgeSeconds", 0...86_400) { settings.maxCacheAgeSeconds = v }
        if let v = try integer("maxIdentityHeaderBytes", 64...65_536) { settings.maxIdentityHeaderBytes = v }
        if let v = try integer("maxClaimsHeaderBytes", 0...65_536) { settings.maxClaimsHeaderBytes = v }
        if let v = try integer("retryAfterSeconds", 1...3600) { settings.retryAfterSeconds = v }
        if let v = try integer("shutdownGraceSeconds", 0...3600) { settings.shutdownGraceSeconds = v }
        if let v = try integer("unknownKidCooldownSeconds", 1...86_400) { settings.unknownKidCooldownSeconds = v }
        if let v = try integer("keyRetryIntervalSeconds", 1...3600) { settings.keyRetryIntervalSeconds = v }
        if let v = try integer("minKeyLifetimeSeconds", 1...86_400) { settings.minKeyLifetimeSeconds = v }
        return settings
    }

    /// `HOST:PORT` (`[v6]:PORT` for an IPv6 address).
    package static func parseListen(_ text: String) throws(ConfigurationError) -> (host: String, port: Int) {
        var host: Substring, portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw ConfigurationError("give HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw ConfigurationError("give HOST:PORT, e.g. 127.0.0.1:8080") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else {
            throw ConfigurationError("give HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:8080 (not \(text))")
        }
        return (String(host), port)
    }
}

/// A `HOST:PORT` to listen on.
package struct ListenAddress: Equatable, Sendable {
    package var host: String
    package var port: Int

    package init(_ parsed: (host: String, port: Int)) {
        host = parsed.host
        port = parsed.port
    }
}
