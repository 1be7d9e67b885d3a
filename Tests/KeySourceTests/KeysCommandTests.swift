import Foundation
import IDTokenKit
import TestSupport
import Testing

/// `idtoken keys …`, run as the built executable.
@Suite struct KeysCommandTests {
    static func run(_ arguments: [String]) async throws -> BuiltTool.Result {
        let path = try #require(BuiltTool.path("idtoken"), "the idtoken executable is built with the tests")
        return try await BuiltTool.run(path, arguments)
    }

    @Test func archiveAddThenShowListsFirstAndLastSeen() async throws {
        let directory = Fixtures.temporaryDirectory() + "/issuer"
        for (file, at) in [("jwks-a", "2024-01-01T00:00:00Z"), ("jwks-b", "2024-04-01T00:00:00Z"), ("jwks-c", "1719792000")] {
            let added = try await Self.run(["keys", "archive", "add", directory, Fixtures.path("test-keys/\(file).json"), "--at", at])
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stdout.contains("stored \(directory)/"))
        }
        let shown = try await Self.run(["keys", "show", directory, "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let report = try JSONTree.parse(shown.stdout)
        #expect(report["kind"]?.string == "directory")
        #expect(report["snapshots"]?.int64 == 3)
        let keys = try #require(report["keys"]?.array)
        let byKid = Dictionary(uniqueKeysWithValues: keys.map { ($0["kid"]!.string!, $0) })
        #expect(byKid.keys.sorted() == ["test-ec-1", "test-rsa-1", "test-rsa-2", "test-rsa-3", "test-rsa-4"])
        #expect(byKid["test-rsa-2"]?["first_seen"]?.string == "2024-01-01T00:00:00Z")
        #expect(byKid["test-rsa-2"]?["last_seen"]?.string == "2024-04-01T00:00:00Z")
        #expect(byKid["test-rsa-3"]?["last_seen"]?.string == "2024-07-01T00:00:00Z")
        #expect(byKid["test-ec-1"]?["kty"]?.string == "EC P-256")
        #expect(byKid["test-rsa-1"]?["bits"]?.int64 == 2048)
        let thumbprint = try KeySetFile.load(Fixtures.path("test-keys/jwks-a.json")).key(kid: "test-rsa-1")?.thumbprint
        #expect(byKid["test-rsa-1"]?["thumbprint"]?.string == thumbprint)

        let text = try await Self.run(["keys", "show", directory])
        #expect(text.stdout.contains("5 keys from 3 snapshots"))
        #expect(text.stdout.contains("FIRST SEEN"))
    }

    @Test func verifyWithAnArchiveDirectoryAcceptsATokenWhoseKeyAppleRotatedOut() async throws {
        let directory = Fixtures.temporaryDirectory() + "/apple"
        for (file, at) in [("2020-08_AzimoLabs_authKeys.json", "2020-08-06T00:00:00Z"), ("2025-03_reconstructed.json", "2025-03-01T00:00:00Z")] {
            let added = try await Self.run(["keys", "archive", "add", directory, Fixtures.path("apple/\(file)"), "--at", at])
            #expect(added.status == 0, "\(added.stderr)")
        }
        let tokens = try JSONTree.parse(Fixtures.bytes("apple/tokens.json"))
        let record = try #require(tokens["tokens"]?.array?.first)
        let token = try #require(record["token"]?.string)
        let at = String(try #require(record["iat"]?.int64) + 60)
        let arguments = ["verify", token, "--provider", "apple", "--audience", "com.c.azimo.stage", "--at", at, "--json"]

        let archived = try await Self.run(arguments + ["--keys", directory])
        #expect(archived.status == 0, "\(archived.stdout) \(archived.stderr)")
        let verdict = try JSONTree.parse(archived.stdout)
        #expect(verdict["valid"]?.bool == true)
        #expect(verdict["kid"]?.string == "86D88Kf")

        let current = try await Self.run(arguments + ["--keys", Fixtures.path("apple/2025-03_reconstructed.json")])
        #expect(current.status == 1)
        #expect(try JSONTree.parse(current.stdout)["error"]?["code"]?.string == "unknown_key")
    }

    @Test func verifyFetchesKeysFromAURL() async throws {
        let server = try await ScriptedHTTPServer.start(.json(Fixtures.bytes("test-keys/jwks-a.json")))
        let arguments = ["verify", "--provider", "oidc", "--issuer", "https://issuer.test.invalid", "--audience", "test-audience",
                         "--at", "1700000100", "--json", "--keys", server.url]
        let valid = try await Self.run(Array(arguments[0...0]) + [Fixtures.testTokens["test-ec-1"]!] + Array(arguments[1...]))
        #expect(valid.status == 0, "\(valid.stdout) \(valid.stderr)")
        #expect(try JSONTree.parse(valid.stdout)["valid"]?.bool == true)
        let unknown = try await Self.run(Array(arguments[0...0]) + [Fixtures.testTokens["test-rsa-3"]!] + Array(arguments[1...]))
        #expect(unknown.status == 1)
        #expect(try JSONTree.parse(unknown.stdout)["error"]?["code"]?.string == "unknown_key")
        #expect(server.requestCount == 2, "one fetch per run; the unknown kid's refetch is within the cooldown")

        server.reply(.respond(status: 503, headers: [], body: []))
        let down = try await Self.run(Array(arguments[0...0]) + [Fixtures.testTokens["test-ec-1"]!] + Array(arguments[1...]))
        #expect(down.status == 3)
        #expect(try JSONTree.parse(down.stdout)["error"]?["code"]?.string == "keys_unavailable")
        await server.stop()
    }

    @Test func showListsRefusedKeysWithReasons() async throws {
        let shown = try await Self.run(["keys", "show", Fixtures.path("test-keys/jwks-with-refused.json")])
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("1 key, 3 refused"))
        #expect(shown.stdout.contains("test-rsa-weak: RSA key of 1024 bits is below the 2048-bit minimum"))
        let missing = try await Self.run(["keys", "show", Fixtures.path("test-keys/none.json")])
        #expect(missing.status == 2)
    }

    @Test func fetchWritesTheBodyAndArchivesIt() async throws {
        let body = Fixtures.bytes("test-keys/jwks-b.json")
        let server = try await ScriptedHTTPServer.start(.json(body, headers: [("Cache-Control", "max-age=600")]))
        let directory = Fixtures.temporaryDirectory()
        let fetched = try await Self.run(["keys", "fetch", "--provider", "oidc", "--url", server.url,
                                          "--out", directory + "/keys.json", "--archive", directory + "/archive"])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.contains("test-rsa-3"))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/keys.json"))) == body)
        #expect(try KeyArchive.load(directory: directory + "/archive").snapshots.count == 1)

        let toStdout = try await Self.run(["keys", "fetch", "--provider", "oidc", "--url", server.url])
        #expect(Array(toStdout.stdout.utf8) == body)
        #expect(toStdout.stderr.contains("2 keys"))

        let shown = try await Self.run(["keys", "show", server.url, "--json"])
        #expect(try JSONTree.parse(shown.stdout)["keys"]?.array?.count == 2)
        #expect(server.requestCount == 3)

        server.reply(.respond(status: 500, headers: [], body: []))
        let failed = try await Self.run(["keys", "fetch", "--provider", "oidc", "--url", server.url])
        #expect(failed.status == 3, "keys unavailable")
        #expect(failed.stderr.contains("HTTP 500"))
        await server.stop()

        let noURL = try await Self.run(["keys", "fetch", "--provider", "oidc"])
        #expect(noURL.status == 2)
        let insecure = try await Self.run(["keys", "show", "http://example.com/keys"])
        #expect(insecure.status == 2)
        #expect(insecure.stderr.contains("https"))
    }
}
