import ArgumentParser
import Foundation
import IDTokenKit

/// `--keys SRC` (repeatable): a JWKS file, a kid → PEM-certificate map file, a directory of such files, or a
/// URL. Files and directories are merged into one static key set.
struct KeyOptions: ParsableArguments {
    @Option(name: .long, help: "JWKS or kid→PEM certificate map: a file, a directory of such files, or a URL. Repeatable; default: the provider's key URL.")
    var keys: [String] = []

    /// A key source for `profile`.
    ///
    /// - Throws: ``UsageError`` when a file cannot be read or parsed (exit 2); ``TokenError`` with
    ///   `keys_unavailable` when the sources hold no usable key (exit 3).
    func keySource(for profile: Profile) throws -> any KeySource {
        let sources = keys.isEmpty ? profile.keysURL.map { [$0] } ?? [] : keys
        guard !sources.isEmpty else {
            throw UsageError("no key source: give --keys FILE|DIR|URL or --jwks-url")
        }
        let urls = sources.filter(RemoteKeys.isURL)
        if !urls.isEmpty {
            guard urls.count == sources.count, urls.count == 1 else {
                throw UsageError("give either one key URL or key files and directories, not both")
            }
            return try RemoteKeys.keySource(url: urls[0], profile: profile)
        }
        var set = JWKSet.empty
        for path in sources { set = set.merging(try KeyOptions.load(path)) }
        // Keys refused at load (too small, wrong use…) leave a set that is empty but not unavailable: tokens
        // naming them are unknown_key, with the reason.
        guard !set.isEmpty || !set.rejected.isEmpty else {
            throw TokenError(.keysUnavailable, "no key at all in \(sources.joined(separator: ", "))")
        }
        return StaticKeySource(set)
    }

    /// One file, or every `*.json` file of a directory (sorted by name; on a kid in several files, the first wins).
    static func load(_ path: String) throws -> JWKSet {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw UsageError("no such key file or directory: \(path)")
        }
        if isDirectory.boolValue {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
            guard !names.isEmpty else { throw UsageError("no .json key files in \(path)") }
            return try names.reduce(JWKSet.empty) { set, name in set.merging(try loadFile((path as NSString).appendingPathComponent(name))) }
        }
        return try loadFile(path)
    }

    static func loadFile(_ path: String) throws -> JWKSet {
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        do { return try JWKSet.parse(Array(data)) } catch {
            throw UsageError("\(path) is not a key set: \(error.reason)")
        }
    }
}
