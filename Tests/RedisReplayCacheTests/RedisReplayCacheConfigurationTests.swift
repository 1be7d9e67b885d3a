import Testing
@testable import IDTokenKitRedis

@Suite struct RedisReplayCacheConfigurationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let url: String
        let host: String, port: Int, database: Int
        let username: String?, password: String?
        var testDescription: String { url }
    }

    @Test(arguments: [
        Case(url: "redis://localhost", host: "localhost", port: 6379, database: 0, username: nil, password: nil),
        Case(url: "redis://127.0.0.1:6380", host: "127.0.0.1", port: 6380, database: 0, username: nil, password: nil),
        Case(url: "redis://127.0.0.1:6380/", host: "127.0.0.1", port: 6380, database: 0, username: nil, password: nil),
        Case(url: "redis://cache.internal:7000/5", host: "cache.internal", port: 7000, database: 5, username: nil, password: nil),
        Case(url: "redis://:secret@host:1/2", host: "host", port: 1, database: 2, username: nil, password: "secret"),
        Case(url: "redis://secret@host", host: "host", port: 6379, database: 0, username: nil, password: "secret"),
        Case(url: "redis://alice:secret@host", host: "host", port: 6379, database: 0, username: "alice", password: "secret"),
        Case(url: "redis://:p%40ss%3Aw%2Frd@host", host: "host", port: 6379, database: 0, username: nil, password: "p@ss:w/rd"),
        Case(url: "redis://:p@ss@host", host: "host", port: 6379, database: 0, username: nil, password: "p@ss"),
        Case(url: "redis://:@host", host: "host", port: 6379, database: 0, username: nil, password: nil),
        Case(url: "redis://[::1]:6390/1", host: "::1", port: 6390, database: 1, username: nil, password: nil),
        Case(url: "redis://[::1]", host: "::1", port: 6379, database: 0, username: nil, password: nil),
    ])
    func parses(_ expected: Case) throws {
        let configuration = try RedisReplayCacheConfiguration(url: expected.url)
        #expect(configuration.host == expected.host)
        #expect(configuration.port == expected.port)
        #expect(configuration.database == expected.database)
        #expect(configuration.username == expected.username)
        #expect(configuration.password == expected.password)
        // The URL sets only where Redis is; the rest keeps its defaults.
        #expect(configuration.failureMode == .reject)
        #expect(configuration.expiry == .absolute)
        #expect(configuration.keyPrefix == "idtk:replay:")
    }

    @Test(arguments: [
        ("http://host:6379", "redis://"),
        ("rediss://host", "TLS"),
        ("redis://", "host is missing"),
        ("redis://:6379", "host is missing"),
        ("redis://host:0", "port"),
        ("redis://host:65536", "port"),
        ("redis://host:abc", "port"),
        ("redis://host/x", "database"),
        ("redis://host/-1", "database"),
        ("redis://host?db=1", "query"),
        ("redis://:%zz@host", "hex digits"),
        ("redis://:%ff@host", "UTF-8"),
        ("redis://[::1", "IPv6"),
        ("redis://[::1]x", "IPv6"),
    ])
    func refuses(_ url: String, _ expectedWording: String) {
        #expect {
            _ = try RedisReplayCacheConfiguration(url: url)
        } throws: { error in
            (error as? RedisConfigurationError)?.description.contains(expectedWording) == true
        }
    }

    @Test func theDisplayAddressLeavesOutThePassword() throws {
        let configuration = try RedisReplayCacheConfiguration(url: "redis://:secret@10.0.0.5:6380/2")
        #expect(configuration.displayAddress == "redis://10.0.0.5:6380/2")
        #expect(try RedisReplayCacheConfiguration(url: "redis://[::1]").displayAddress == "redis://[::1]:6379/0")
    }

    /// `<prefix><first 16 bytes of SHA-256(issuer), hex>:<signature digest, hex>`.
    @Test func keyLayout() {
        let digest = (0..<32).map { UInt8($0) }
        let replay = ReplayEntry(issuer: "https://appleid.apple.com", tokenDigest: digest, expiresAt: 0)
        let key = RedisReplayCache.key(for: replay, prefix: "idtk:replay:")
        // SHA-256("https://appleid.apple.com"), computed independently with `printf %s … | sha256sum`.
        let issuerHash = "36fb3d6235d7ebbe76e5c6fb53e156cc606008e9a015ba14cb0726f969eb9156"
        #expect(key == "idtk:replay:" + issuerHash.prefix(32) + ":000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        #expect(RedisReplayCache.key(for: replay, prefix: "app1:").hasPrefix("app1:" + issuerHash.prefix(32) + ":"))
        let other = ReplayEntry(issuer: "https://www.facebook.com", tokenDigest: digest, expiresAt: 0)
        #expect(RedisReplayCache.key(for: other, prefix: "idtk:replay:") != key)
        #expect(RedisReplayCache.key(for: other, prefix: "idtk:replay:").count == key.count)
    }

    @Test func theSetCommandCarriesNXAndTheExpiry() throws {
        let replay = ReplayEntry(issuer: "i", tokenDigest: [1, 2], expiresAt: 1_700_000_060)
        let absolute = RedisReplayCache(configuration: RedisReplayCacheConfiguration())
        let words = absolute.setCommand(for: replay, now: 1_700_000_000).map { String(decoding: $0, as: UTF8.self) }
        #expect(words == ["SET", RedisReplayCache.key(for: replay, prefix: "idtk:replay:"), "1", "NX", "PXAT", "1700000060000"])
        let relative = RedisReplayCache(configuration: RedisReplayCacheConfiguration(keyPrefix: "p:", expiry: .relativeToNow))
        let relativeWords = relative.setCommand(for: replay, now: 1_700_000_000).map { String(decoding: $0, as: UTF8.self) }
        #expect(relativeWords == ["SET", RedisReplayCache.key(for: replay, prefix: "p:"), "1", "NX", "PX", "60000"])
        let farFuture = ReplayEntry(issuer: "i", tokenDigest: [1], expiresAt: .max)
        #expect(absolute.setCommand(for: farFuture, now: 0).last == Array("253402300799000".utf8))
    }
}
