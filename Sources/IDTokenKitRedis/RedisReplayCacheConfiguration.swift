/// Where a ``RedisReplayCache`` finds Redis and how it behaves when Redis cannot answer.
public struct RedisReplayCacheConfiguration: Sendable, Equatable {
    /// What a check does when Redis cannot be reached or does not answer in time.
    public enum FailureMode: String, Sendable, Equatable {
        /// Refuse the token: ``TokenError`` code `replay_store_unavailable`, with a message saying the replay store is
        /// unavailable. The safe default: no token is accepted without its replay check.
        case reject
        /// Accept the token without a replay check, and log a warning. Keeps sign-in working through a Redis
        /// outage, at the price of letting replays through while it lasts.
        case allow
    }

    /// How an entry's time-to-live is given to Redis.
    public enum Expiry: String, Sendable, Equatable {
        /// `PXAT (exp + leeway) × 1000`: Redis forgets the entry at that wall-clock time on its own clock.
        /// Right for live verification, where `now` is the real time.
        case absolute
        /// `PX (exp + leeway − now) × 1000`: the entry lives as long, counted from when Redis receives it.
        /// Use it when `now` is not the real time (an audit judging logged tokens at the times they were
        /// presented), where an absolute time already in Redis's past would make Redis drop the entry at once
        /// and miss every replay.
        case relativeToNow
    }

    /// The Redis server's host name or address.
    public var host: String
    /// The Redis server's TCP port.
    public var port: Int
    /// The user name for Redis 6 ACLs (`AUTH username password`); nil for the default user.
    public var username: String?
    /// The password (`AUTH`), or nil when Redis needs none.
    public var password: String?
    /// The database index (`SELECT`).
    public var database: Int
    /// Put before every key, so that the entries can share a Redis with other data.
    public var keyPrefix: String
    /// The most connections open at once; a check waits for a free one (up to ``commandTimeout``).
    public var poolSize: Int
    /// How long a connection attempt may take.
    public var connectTimeout: Duration
    /// How long to wait for a reply (and for a free connection) before treating Redis as unavailable.
    public var commandTimeout: Duration
    /// After a failed connection attempt, checks follow the failure mode at once, without trying to connect,
    /// for this long; so that an unreachable Redis costs each check nothing rather than a connect timeout.
    public var reconnectDelay: Duration
    /// What a presentation gets when Redis cannot be reached.
    public var failureMode: FailureMode
    /// How entries expire: at the token's `exp` plus leeway, or after the token's remaining lifetime from now.
    public var expiry: Expiry

    /// A configuration; every parameter has a default suited to a local Redis.
    public init(host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil,
                database: Int = 0, keyPrefix: String = "idtk:replay:", poolSize: Int = 8,
                connectTimeout: Duration = .milliseconds(500), commandTimeout: Duration = .milliseconds(500),
                reconnectDelay: Duration = .milliseconds(250), failureMode: FailureMode = .reject,
                expiry: Expiry = .absolute) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.keyPrefix = keyPrefix
        self.poolSize = poolSize
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.reconnectDelay = reconnectDelay
        self.failureMode = failureMode
        self.expiry = expiry
    }

    /// Reads `redis://[[username]:password@]host[:port][/database]`, the form `idtoken audit --replay-store`
    /// takes. The port defaults to 6379 and the database to 0; user name and password may be percent-encoded;
    /// an IPv6 address goes in brackets (`redis://[::1]:6380`). Other settings keep their defaults.
    public init(url: String) throws(RedisConfigurationError) {
        self.init()
        let scheme = "redis://"
        guard url.hasPrefix(scheme) else {
            if url.hasPrefix("rediss://") {
                throw RedisConfigurationError("\(url): TLS (rediss://) is not supported; use redis:// over a trusted network or a TLS tunnel")
            }
            throw RedisConfigurationError("\(url): a replay store URL has the form redis://[:password@]host[:port][/database]")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        guard !rest.contains("?"), !rest.contains("#") else {
            throw RedisConfigurationError("\(url): query and fragment parts are not supported")
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let user = try Self.percentDecoded(credentials[..<colon], in: url)
                username = user.isEmpty ? nil : user
                password = try Self.percentDecoded(credentials[credentials.index(after: colon)...], in: url)
            } else {
                // `redis://secret@host` is how several clients write a password alone.
                password = try Self.percentDecoded(credentials, in: url)
            }
            if password?.isEmpty == true { password = nil }
        }
        var authority = rest
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard let index = Int(path), index >= 0 else {
                    throw RedisConfigurationError("\(url): the database must be a number, 0 or more (got \"\(path)\")")
                }
                database = index
            }
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw RedisConfigurationError("\(url): an IPv6 address must end with ]")
            }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisConfigurationError("\(url): unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw RedisConfigurationError("\(url): the host is missing") }
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw RedisConfigurationError("\(url): the port must be a number from 1 to 65535 (got \"\(portText)\")")
            }
            port = value
        }
    }

    private static func percentDecoded(_ text: Substring, in url: String) throws(RedisConfigurationError) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw RedisConfigurationError("\(url): a % in the user name or password must be followed by two hex digits")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw RedisConfigurationError("\(url): the user name or password is not valid UTF-8 once decoded")
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The server's address for messages, without the password.
    public var displayAddress: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "redis://\(hostPart):\(port)/\(database)"
    }
}

/// A replay-store URL or configuration that cannot be used.
public struct RedisConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = description }
}
