import Foundation
import JOSE

/// The benchmark's tokens and keys (bench/fixtures/tokens.json, made by bench/tools/make_fixtures.py).
struct Fixtures {
    let now: Int64
    let rawNonce: String
    let jwks: JWKSet
    let tokens: [String: String]
    let audiences: [String: String]

    init(path: String) throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let tree = try JSONTree.parse(bytes)
        guard let now = tree["now"]?.int64, let rawNonce = tree["rawNonce"]?.string, let jwks = tree["jwks"],
              let tokens = tree["tokens"]?.objectMembers, let audiences = tree["audiences"]?.objectMembers else {
            throw BenchError("\(path) is not a benchmark fixture file")
        }
        self.now = now
        self.rawNonce = rawNonce
        self.jwks = JWKSet.fromJWKs(jwks["keys"]?.array ?? [])
        self.tokens = Dictionary(uniqueKeysWithValues: tokens.compactMap { m in m.value.string.map { (m.key, $0) } })
        self.audiences = Dictionary(uniqueKeysWithValues: audiences.compactMap { m in m.value.string.map { (m.key, $0) } })
    }

    func token(_ name: String) throws -> String {
        guard let token = tokens[name] else { throw BenchError("no token \"\(name)\" in the fixtures") }
        return token
    }

    static var defaultPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../fixtures/tokens.json").standardizedFileURL.path
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
