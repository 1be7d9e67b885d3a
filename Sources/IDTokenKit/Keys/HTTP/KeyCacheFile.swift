import Foundation

/// The last good key set an ``HTTPKeySource`` fetched, kept on disk so that a restarted server verifies
/// tokens at once instead of waiting for (or failing on) its first fetch.
///
/// The file is one JSON object: `{"format":"idtoken-key-cache/1","url":…,"fetched_at":…,"expires_at":…,
/// "body":"<the response body as served>"}`. Keeping the body verbatim means the set is re-parsed with the
/// same rules as a fresh download; ``KeySetFile`` reads these files too.
public struct KeyCacheFile: Sendable, Equatable {
    /// The value of the file's `format` member.
    public static let format = "idtoken-key-cache/1"

    /// The URL the body came from.
    public let url: String
    /// When it was fetched (Unix seconds).
    public let fetchedAt: Double
    /// When its cache lifetime ran out (Unix seconds).
    public let expiresAt: Double
    /// The response body, byte for byte.
    public let body: [UInt8]

    /// A cache file for the key set `body` fetched from `url` at `fetchedAt`, usable until `expiresAt` (Unix seconds).
    public init(url: String, fetchedAt: Double, expiresAt: Double, body: [UInt8]) {
        self.url = url
        self.fetchedAt = fetchedAt
        self.expiresAt = expiresAt
        self.body = body
    }

    /// The file's bytes.
    public func encoded() -> [UInt8] {
        var out = Array("{\"format\":".utf8)
        out += Self.jsonString(Self.format)
        out += Array(",\"url\":".utf8) + Self.jsonString(url)
        out += Array(",\"fetched_at\":\(Self.number(fetchedAt)),\"expires_at\":\(Self.number(expiresAt)),\"body\":".utf8)
        out += Self.jsonString(String(decoding: body, as: UTF8.self))
        out += Array("}\n".utf8)
        return out
    }

    /// Whether a parsed JSON document is a key cache file (as opposed to a plain key set).
    static func isCacheFile(_ tree: JSONTree) -> Bool { tree["format"]?.string == format }

    /// Reads a cache file's document.
    public static func decode(_ bytes: [UInt8]) throws(KeyFetchError) -> KeyCacheFile {
        let tree: JSONTree
        do { tree = try JSONTree.parse(bytes, maxDepth: 4) } catch {
            throw KeyFetchError(.malformed, "key cache file is not valid JSON: \(error)")
        }
        return try decode(tree)
    }

    static func decode(_ tree: JSONTree) throws(KeyFetchError) -> KeyCacheFile {
        guard isCacheFile(tree) else {
            throw KeyFetchError(.malformed, "not a key cache file (\"format\" is not \"\(format)\")")
        }
        guard let url = tree["url"]?.string, let fetchedAt = tree["fetched_at"]?.double,
              let expiresAt = tree["expires_at"]?.double, let body = tree["body"]?.string,
              fetchedAt.isFinite, expiresAt.isFinite else {
            throw KeyFetchError(.malformed, "key cache file lacks url, fetched_at, expires_at or body")
        }
        return KeyCacheFile(url: url, fetchedAt: fetchedAt, expiresAt: expiresAt, body: Array(body.utf8))
    }

    /// Reads the file at `path`.
    public static func read(path: String) throws(KeyFetchError) -> KeyCacheFile {
        try decode(try KeyFileIO.read(path))
    }

    /// Writes the file atomically (a temporary file renamed over the old one), so that a crash mid-write never
    /// leaves a truncated cache behind.
    public func write(path: String) throws(KeyFetchError) {
        try KeyFileIO.writeAtomically(encoded(), to: path)
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    static func jsonString(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONText.appendString(text, to: &out)
        return out
    }
}
