/// Byte-for-byte comparison of buffers, eight bytes at a time: the verdict cache confirms a token on its full
/// text (about 1 KB), and the interners compare every record's issuer, audience and key ID.
enum ByteComparison {
    /// Whether the bytes of `all` from `start` are `bytes`.
    static func equal(_ all: UnsafeRawBufferPointer, at start: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard start >= 0, start + count <= all.count else { return false }
        var i = 0
        while i + 8 <= count {
            if all.loadUnaligned(fromByteOffset: start + i, as: UInt64.self) != bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < count {
            if all[start + i] != bytes[i] { return false }
            i += 1
        }
        return true
    }
}
