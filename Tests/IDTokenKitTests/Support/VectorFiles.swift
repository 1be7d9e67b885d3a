import Foundation
import IDTokenKit

/// Where the repository's `Vectors/` directory is, found from this file's path so that a fresh clone is
/// self-contained.
enum VectorFiles {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors")

    static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    static func bytes(_ relative: String) throws -> [UInt8] { Array(try Data(contentsOf: url(relative))) }

    static func json(_ relative: String) throws -> JSONTree { try JSONTree.parse(bytes(relative), maxDepth: 64) }

    /// A key set from a vector's `keys` member: a path under `Vectors/`, an inline JWKS or certificate map.
    static func keySet(_ ref: JSONTree) throws -> JWKSet {
        switch ref {
        case .string(let path):
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url(path).path, isDirectory: &isDirectory), isDirectory.boolValue {
                // A directory of key files, merged; the first file naming a kid wins.
                let names = try FileManager.default.contentsOfDirectory(atPath: url(path).path).filter { $0.hasSuffix(".json") }.sorted()
                return try names.reduce(JWKSet.empty) { set, name in set.merging(try JWKSet.parse(bytes(path + "/" + name))) }
            }
            return try JWKSet.parse(bytes(path))
        case .object(let members):
            if let keys = ref["keys"]?.array { return JWKSet.fromJWKs(keys) }
            return JWKSet.fromCertificateMap(members.compactMap { member in member.value.string.map { (member.key, $0) } })
        default: throw VectorError("keys must be a path or an object")
        }
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
