import JOSE

/// Reads a refused token's header and claims for the report only, when the verifier stopped before it could
/// (an `alg` of `none`, a `crit` header…). Nothing read here decides a verdict.
enum UnverifiedPeek {
    /// The header and payload objects, each nil when its segment is not base64url JSON.
    static func parts(_ token: String, maxBytes: Int = 16 * 1024) -> (header: JSONObject?, claims: JSONObject?) {
        guard token.utf8.count <= maxBytes else { return (nil, nil) }
        let segments = token.utf8.split(separator: UInt8(ascii: "."), maxSplits: 2, omittingEmptySubsequences: false)
        guard segments.count == 3 else { return (nil, nil) }
        func object(_ segment: Substring.UTF8View.SubSequence) -> JSONObject? {
            guard let bytes = Base64URL.decode(bytes: Array(segment)) else { return nil }
            return try? JSONObject.parse(bytes, maxDepth: 16)
        }
        return (object(segments[0]), object(segments[1]))
    }
}
