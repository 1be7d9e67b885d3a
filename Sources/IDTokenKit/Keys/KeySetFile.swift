/// Key sets on disk: a JWKS, a single JWK, a kid → PEM certificate map, a key cache file
/// (``KeyCacheFile``), or a directory holding a ``KeyArchive``.
///
/// ```swift
/// let keys = try KeySetFile.load("apple-keys/")      // an archive directory
/// let source = StaticKeySource(keys)
/// ```
public enum KeySetFile {
    /// One file's keys, and where they came from when the file says (key cache files do).
    public struct Contents: Sendable {
        /// The keys, with those refused listed in `keys.rejected`; possibly empty.
        public let keys: JWKSet
        /// The key-set document itself (for a cache file: the body it holds).
        public let body: [UInt8]
        /// For a key cache file, when its body was fetched and from where.
        public let fetchedAt: Double?
        /// The URL the set was fetched from, when the file says.
        public let url: String?
    }

    /// Reads one key file. The set may be empty (every key refused): callers that verify should use
    /// ``load(_:)``, which refuses that.
    public static func read(file path: String) throws(KeyFetchError) -> Contents {
        try parse(try KeyFileIO.read(path), source: path)
    }

    /// Reads a key document held in memory; `source` names it in errors.
    public static func parse(_ bytes: [UInt8], source: String) throws(KeyFetchError) -> Contents {
        let tree: JSONTree
        do { tree = try JSONTree.parse(bytes, maxDepth: 8) } catch {
            throw KeyFetchError(.malformed, "\(source) is not valid JSON: \(error)")
        }
        if KeyCacheFile.isCacheFile(tree) {
            let file = try KeyCacheFile.decode(tree)
            return Contents(keys: try parseSet(file.body, source: source), body: file.body,
                            fetchedAt: file.fetchedAt, url: file.url)
        }
        return Contents(keys: try parseSet(bytes, source: source), body: bytes, fetchedAt: nil, url: nil)
    }

    /// The keys at `path`: a key file, or a directory read as a ``KeyArchive``. Keys refused at load stay
    /// listed in the set's `rejected`, so that a token naming one fails with `unknown_key` and the reason.
    /// - Throws: ``KeyFetchError``: `file` when nothing is there or a directory holds no `*.json` file,
    ///   `malformed` for a file that is not a key document, `noUsableKeys` when no key is listed at all.
    public static func load(_ path: String) throws(KeyFetchError) -> JWKSet {
        let keys: JWKSet
        switch KeyFileIO.isDirectory(path) {
        case nil: throw KeyFetchError(.file, "no such key file or directory: \(path)")
        case true?:
            let archive = try KeyArchive.load(directory: path)
            guard !archive.snapshots.isEmpty else { throw KeyFetchError(.file, "no .json key files in \(path)") }
            keys = archive.keySet
        case false?: keys = try read(file: path).keys
        }
        guard !keys.isEmpty || !keys.rejected.isEmpty else {
            throw KeyFetchError(.noUsableKeys, "\(path) lists no key at all")
        }
        return keys
    }

    private static func parseSet(_ bytes: [UInt8], source: String) throws(KeyFetchError) -> JWKSet {
        do { return try JWKSet.parse(bytes) } catch {
            throw KeyFetchError(.malformed, "\(source): \(error.reason)")
        }
    }
}
