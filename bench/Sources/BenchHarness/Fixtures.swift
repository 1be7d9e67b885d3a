import Foundation
import JOSE

/// The benchmark's tokens and keys (bench/fixtures/tokens.json, made by bench/tools/make_fixtures.py).
public struct Fixtures {
    public let now: Int64
    public let rawNonce: String
    public let jwks: JWKSet
    /// The JWKS as JSON text, for verifiers that load keys themselves.
    public let jwksJSON: String
    public let tokens: [String: String]
    public let audiences: [String: String]

    public init(path: String) throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let tree = try JSONTree.parse(bytes)
        guard let now = tree["now"]?.int64, let rawNonce = tree["rawNonce"]?.string, let jwks = tree["jwks"],
              let tokens = tree["tokens"]?.objectMembers, let audiences = tree["audiences"]?.objectMembers else {
            throw BenchError("\(path) is not a benchmark fixture file")
        }
        self.now = now
        self.rawNonce = rawNonce
        self.jwks = JWKSet.fromJWKs(jwks["keys"]?.array ?? [])
        self.jwksJSON = try Fixtures.reencode(jwks)
        self.tokens = Dictionary(uniqueKeysWithValues: tokens.compactMap { m in m.value.string.map { (m.key, $0) } })
        self.audiences = Dictionary(uniqueKeysWithValues: audiences.compactMap { m in m.value.string.map { (m.key, $0) } })
    }

    public func token(_ name: String) throws -> String {
        guard let token = tokens[name] else { throw BenchError("no token \"\(name)\" in the fixtures") }
        return token
    }

    /// Writes a JSON tree back as text (the fixtures are plain: strings, numbers, arrays, objects).
    static func reencode(_ tree: JSONTree) throws -> String {
        switch tree {
        case .object(let members):
            return "{" + (try members.map { "\"\($0.key)\":" + (try reencode($0.value)) }).joined(separator: ",") + "}"
        case .array(let elements): return "[" + (try elements.map(reencode)).joined(separator: ",") + "]"
        case .string(let s): return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        }
    }

    public static var defaultPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../fixtures/tokens.json").standardizedFileURL.path
    }
}

public struct BenchError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
