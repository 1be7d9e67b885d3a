import Foundation
import IDTokenKit

/// Reads key sets from files for an audit: a JWKS, a single JWK or a kid → PEM-certificate map in one file, or
/// a directory of such files (every `.json` file in it, merged: an archive of the keys a provider has used).
public enum KeyFiles {
    /// Whether `reference` names a URL rather than a path.
    public static func isURL(_ reference: String) -> Bool {
        reference.hasPrefix("https://") || reference.hasPrefix("http://")
    }

    /// The key set in the file or directory at `path`.
    /// - Throws: ``ConfigurationError`` naming the file when it cannot be read or holds no usable key.
    public static func load(_ path: String) throws(ConfigurationError) -> JWKSet {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigurationError("the key file \(path) does not exist")
        }
        let files: [String]
        if isDirectory.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            files = names.filter { $0.hasSuffix(".json") }.sorted().map { (path as NSString).appendingPathComponent($0) }
            guard !files.isEmpty else { throw ConfigurationError("the key directory \(path) holds no .json key files") }
        } else {
            files = [path]
        }
        var set = JWKSet.empty
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { throw ConfigurationError("cannot read the key file \(file)") }
            let parsed: JWKSet
            do { parsed = try JWKSet.parse(Array(data)) } catch {
                throw ConfigurationError("\(file) is not a key set: \(error)")
            }
            set = set.merging(parsed)
        }
        guard !set.isEmpty else {
            let reasons = set.rejected.map(\.description).joined(separator: "; ")
            throw ConfigurationError("no usable key in \(path)" + (reasons.isEmpty ? "" : ": \(reasons)"))
        }
        return set
    }
}
