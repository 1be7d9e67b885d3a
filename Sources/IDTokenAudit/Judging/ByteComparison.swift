import JOSE

/// Byte-for-byte comparison of a span of one buffer with another (through JOSE's ``ByteSearch``): the verdict cache
/// confirms a token on its full text (about 1 KB), and the interners compare every record's issuer, audience and
/// key ID.
enum ByteComparison {
    /// Whether the bytes of `all` from `start` are `bytes`.
    static func equal(_ all: UnsafeRawBufferPointer, at start: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard start >= 0, start + bytes.count <= all.count else { return false }
        return ByteSearch.equal(UnsafeRawBufferPointer(rebasing: all[start..<(start + bytes.count)]), bytes)
    }
}
