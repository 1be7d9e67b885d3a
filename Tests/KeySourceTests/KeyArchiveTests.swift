import Foundation
import IDTokenKit
import Testing

/// Key archives, key files and `--keys` resolution.
@Suite struct KeyArchiveTests {
    static let unknownKey = TokenError(.unknownKey, claim: "kid", "")
    static let t1 = UnixTime.parse("2024-01-01T00:00:00Z")!
    static let t2 = UnixTime.parse("2024-04-01T00:00:00Z")!
    static let t3 = UnixTime.parse("2024-07-01T00:00:00Z")!

    /// An archive holding the three test snapshots: A (rsa-1, rsa-2, ec-1) → B (rsa-2, rsa-3) → C (rsa-3, rsa-4).
    static func rotatedArchive() throws -> String {
        let directory = Fixtures.temporaryDirectory() + "/issuer"
        try KeyArchive.add(Fixtures.bytes("test-keys/jwks-a.json"), to: directory, at: t1)
        try KeyArchive.add(Fixtures.bytes("test-keys/jwks-b.json"), to: directory, at: t2)
        try KeyArchive.add(Fixtures.bytes("test-keys/jwks-c.json"), to: directory, at: t3)
        return directory
    }

    @Test func mergesSnapshotsWithFirstAndLastSeenTimes() throws {
        let archive = try KeyArchive.load(directory: try Self.rotatedArchive())
        #expect(archive.snapshots.map(\.time) == [Self.t1, Self.t2, Self.t3])
        #expect(archive.conflicts.isEmpty)
        let seen = Dictionary(uniqueKeysWithValues: archive.entries.map { ($0.kid!, ($0.firstSeen, $0.lastSeen, $0.snapshotCount)) })
        #expect(seen.count == 5)
        #expect(seen["test-rsa-1"]! == (Self.t1, Self.t1, 1))
        #expect(seen["test-ec-1"]! == (Self.t1, Self.t1, 1))
        #expect(seen["test-rsa-2"]! == (Self.t1, Self.t2, 2))
        #expect(seen["test-rsa-3"]! == (Self.t2, Self.t3, 2))
        #expect(seen["test-rsa-4"]! == (Self.t3, Self.t3, 1))
        #expect(archive.keySet.sortedKids == ["test-ec-1", "test-rsa-1", "test-rsa-2", "test-rsa-3", "test-rsa-4"])
    }

    @Test func tokensSignedByRotatedOutKeysVerifyAgainstTheArchive() throws {
        let archive = try KeyArchive.load(directory: try Self.rotatedArchive())
        let latest = try KeySetFile.load(Fixtures.path("test-keys/jwks-c.json"))
        for (kid, token) in Fixtures.testTokens {
            let allowed: Set<JWSAlgorithm> = kid.hasPrefix("test-ec") ? [.es256] : [.rs256]
            _ = try CompactJWS.verify(token, keys: archive.keySet, allowed: allowed)
            if kid == "test-rsa-1" || kid == "test-rsa-2" || kid == "test-ec-1" {
                #expect(throws: Self.unknownKey) { try CompactJWS.verify(token, keys: latest, allowed: allowed) }
            }
        }
    }

    @Test func aRealAppleTokenVerifiesAfterAppleRotatedItsKeyOut() throws {
        let directory = Fixtures.temporaryDirectory() + "/apple"
        try KeyArchive.add(file: Fixtures.path("apple/2020-08_AzimoLabs_authKeys.json"), to: directory,
                           at: UnixTime.parse("2020-08-06T00:00:00Z"), fallbackTime: 0)
        try KeyArchive.add(file: Fixtures.path("apple/2025-03_reconstructed.json"), to: directory,
                           at: UnixTime.parse("2025-03-01T00:00:00Z"), fallbackTime: 0)
        let tree = try JSONTree.parse(Fixtures.bytes("apple/tokens.json"))
        let token = try #require(tree["tokens"]?.array?.first?["token"]?.string)

        let current = try KeySetFile.load(Fixtures.path("apple/2025-03_reconstructed.json"))
        #expect(throws: Self.unknownKey) { try CompactJWS.verify(token, keys: current, allowed: [.rs256]) }

        // `--keys DIR`, as the CLI resolves it.
        let source = try KeySourceResolver.resolve([directory])
        let keys = try #require(source.currentKeys())
        let (jws, _) = try CompactJWS.verify(token, keys: keys, allowed: [.rs256])
        #expect(jws.header.kid == "86D88Kf")
        let entry = try #require(try KeyArchive.load(directory: directory).entries(kid: "86D88Kf").first)
        #expect(entry.lastSeen == UnixTime.parse("2020-08-06T00:00:00Z"))

        // A tampered signature still fails against the archive.
        var bytes = Array(token.utf8)
        bytes[bytes.count - 5] = bytes[bytes.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: TokenError(.badSignature, "")) {
            try CompactJWS.verify(String(decoding: bytes, as: UTF8.self), keys: keys, allowed: [.rs256])
        }
    }

    @Test func aKidReusedForOtherKeyMaterialIsRefused() throws {
        let directory = try Self.rotatedArchive()
        try KeyArchive.add(Fixtures.bytes("test-keys/jwks-kid-reused.json"), to: directory, at: Self.t3 + 86_400)
        let archive = try KeyArchive.load(directory: directory)
        #expect(archive.conflicts == ["test-rsa-1"])
        #expect(archive.entries(kid: "test-rsa-1").count == 2)
        #expect(archive.keySet.key(kid: "test-rsa-1") == nil)
        let reason = try #require(archive.keySet.rejected.first { $0.kid == "test-rsa-1" }?.reason)
        #expect(reason.contains("2 different keys"))
        // Neither the genuine token nor one signed by the key now claiming that kid verifies.
        #expect(throws: Self.unknownKey) {
            try CompactJWS.verify(Fixtures.testTokens["test-rsa-1"]!, keys: archive.keySet, allowed: [.rs256])
        }
        // Every other kid is unaffected.
        _ = try CompactJWS.verify(Fixtures.testTokens["test-rsa-4"]!, keys: archive.keySet, allowed: [.rs256])
        _ = try CompactJWS.verify(Fixtures.testTokens["test-rsa-2"]!, keys: archive.keySet, allowed: [.rs256])
    }

    @Test func addingNamesSnapshotsByTimeAndIsIdempotent() throws {
        let directory = Fixtures.temporaryDirectory() + "/a"
        let body = Fixtures.bytes("test-keys/jwks-a.json")
        let path = try KeyArchive.add(body, to: directory, at: Self.t1)
        #expect((path as NSString).lastPathComponent.hasPrefix("20240101T000000Z-"))
        #expect(try KeyArchive.add(body, to: directory, at: Self.t1) == path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == body)

        // Garbage and sets with nothing usable never enter an archive.
        let refused = #expect(throws: KeyFetchError.self) {
            try KeyArchive.add(Fixtures.bytes("test-keys/jwks-only-refused.json"), to: directory, at: Self.t2)
        }
        #expect(refused?.kind == .noUsableKeys)
        let malformed = #expect(throws: KeyFetchError.self) { try KeyArchive.add(Array("not json".utf8), to: directory, at: Self.t2) }
        #expect(malformed?.kind == .malformed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
    }

    @Test func aKeyCacheFileIsArchivedAtItsFetchTime() throws {
        let directory = Fixtures.temporaryDirectory()
        let cacheFile = directory + "/cache.json"
        try KeyCacheFile(url: "https://example.com/keys", fetchedAt: Self.t2, expiresAt: Self.t2 + 600,
                         body: Fixtures.bytes("test-keys/jwks-b.json")).write(path: cacheFile)
        let path = try KeyArchive.add(file: cacheFile, to: directory + "/archive", at: nil, fallbackTime: 0)
        #expect((path as NSString).lastPathComponent.hasPrefix("20240401T000000Z-"))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == Fixtures.bytes("test-keys/jwks-b.json"))
        let archive = try KeyArchive.load(directory: directory + "/archive")
        #expect(archive.entries.map(\.firstSeen) == [Self.t2, Self.t2])
    }

    @Test func keyFilesListRefusedKeysWithReasons() throws {
        let contents = try KeySetFile.read(file: Fixtures.path("test-keys/jwks-with-refused.json"))
        #expect(contents.keys.sortedKids == ["test-rsa-2"])
        let reasons = Dictionary(uniqueKeysWithValues: contents.keys.rejected.map { ($0.kid!, $0.reason) })
        #expect(reasons.keys.sorted() == ["test-hmac", "test-rsa-enc", "test-rsa-weak"])
        #expect(reasons["test-rsa-weak"]!.contains("2048"))
        #expect(reasons["test-rsa-enc"]!.contains("\"use\""))
        #expect(reasons["test-hmac"]!.contains("symmetric"))

        // A file whose keys were all refused still loads: a token naming one is unknown_key, with the reason.
        let refused = try KeySetFile.load(Fixtures.path("test-keys/jwks-only-refused.json"))
        #expect(refused.isEmpty)
        #expect(refused.rejected.map(\.kid) == ["test-rsa-weak"])
        // A file listing no key at all is unavailable keys.
        let directory = Fixtures.temporaryDirectory()
        try Data("{\"keys\":[]}".utf8).write(to: URL(fileURLWithPath: directory + "/empty.json"))
        let empty = #expect(throws: KeyFetchError.self) { try KeySetFile.load(directory + "/empty.json") }
        #expect(empty?.kind == .noUsableKeys)
        // A directory without key files is a configuration mistake.
        let bare = #expect(throws: KeyFetchError.self) { try KeySetFile.load(Fixtures.temporaryDirectory()) }
        #expect(bare?.kind == .file)
        let missing = #expect(throws: KeyFetchError.self) { try KeySetFile.load(Fixtures.path("test-keys/nothing-here.json")) }
        #expect(missing?.kind == .file)
    }

    @Test func resolvesURLsFilesAndDirectories() async throws {
        let archive = try Self.rotatedArchive()
        let certmap = Fixtures.path("test-keys/certmap-a.json")
        #expect(KeySourceResolver.kind(of: archive) == .directory)
        #expect(KeySourceResolver.kind(of: certmap) == .file)
        #expect(KeySourceResolver.kind(of: "https://appleid.apple.com/auth/keys") == .url)

        let fromDirectory = try KeySourceResolver.resolve([archive])
        #expect(fromDirectory is StaticKeySource)
        #expect(try await fromDirectory.keys(refreshingFor: "test-rsa-1").key(kid: "test-rsa-1") != nil)

        let fromFile = try KeySourceResolver.resolve([certmap])
        #expect(fromFile.currentKeys()?.sortedKids == ["test-rsa-1", "test-rsa-2"])

        // Several files and directories merge; the same key listed twice is one key.
        let merged = try KeySourceResolver.resolve([certmap, Fixtures.path("test-keys/jwks-c.json")])
        #expect(merged.currentKeys()?.sortedKids == ["test-rsa-1", "test-rsa-2", "test-rsa-3", "test-rsa-4"])
        // A kid naming different keys in two sources is refused, not resolved by order.
        let clash = try KeySourceResolver.resolve([certmap, Fixtures.path("test-keys/jwks-kid-reused.json")])
        #expect(clash.currentKeys()?.sortedKids == ["test-rsa-2"])

        let url = try KeySourceResolver.resolve(["https://appleid.apple.com/auth/keys"], cachePolicy: Self.noBackground)
        #expect((url as? HTTPKeySource)?.url.absoluteString == "https://appleid.apple.com/auth/keys")
        await (url as? HTTPKeySource)?.shutdown()
        let fallback = try KeySourceResolver.resolve([], defaultURL: Profile.facebookJWKSURL, cachePolicy: Self.noBackground)
        #expect((fallback as? HTTPKeySource)?.url.absoluteString == Profile.facebookJWKSURL)
        await (fallback as? HTTPKeySource)?.shutdown()

        #expect(throws: KeyFetchError.self) { try KeySourceResolver.resolve(["https://a.example/keys", certmap]) }
        #expect(throws: KeyFetchError.self) { try KeySourceResolver.resolve(["https://a.example/keys", "https://b.example/keys"]) }
        #expect(throws: KeyFetchError.self) { try KeySourceResolver.resolve([]) }
        #expect(throws: KeyFetchError.self) { try KeySourceResolver.resolve(["http://example.com/keys"]) }
        #expect(throws: KeyFetchError.self) { try KeySourceResolver.resolve([Fixtures.path("test-keys/missing.json")]) }
    }

    static var noBackground: KeyCachePolicy {
        var policy = KeyCachePolicy()
        policy.refreshesInBackground = false
        return policy
    }
}
