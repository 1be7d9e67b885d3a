import CLibCrypto

/// SHA-256 through libcrypto's one-shot function, for nonces and replay-cache keys.
public enum SHA256 {
    /// The digest length in bytes.
    public static let byteCount = 32

    /// The digest of `bytes`.
    public static func hash<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return digest }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    /// The digest of the UTF-8 bytes of `text`.
    public static func hash(utf8 text: String) -> [UInt8] {
        var text = text
        return text.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// The digest of a raw byte span.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
            _ = idtk_sha256(bytes.baseAddress, bytes.count, out.baseAddress)
            initialized = byteCount
        }
    }

    /// Writes the digest of `bytes` to `digest`, which must hold at least ``byteCount`` bytes.
    public static func hash(_ bytes: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= byteCount, "a SHA-256 digest needs \(byteCount) bytes")
        _ = idtk_sha256(bytes.baseAddress, bytes.count, digest.baseAddress?.assumingMemoryBound(to: UInt8.self))
    }

    /// The digest of the UTF-8 bytes of `text` as 64 lowercase hexadecimal digits.
    public static func hexDigest(utf8 text: String) -> String {
        hash(utf8: text).lowercaseHex
    }
}

extension Array where Element == UInt8 {
    /// The bytes as lowercase hexadecimal digits, two per byte.
    public var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
