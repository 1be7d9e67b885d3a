internal import CLibCrypto

/// SHA-256 through libcrypto's one-shot function, for nonces and replay-cache keys.
package enum SHA256 {
    /// The digest length in bytes.
    package static let byteCount = 32

    /// The digest of `bytes`.
    package static func hash<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return digest }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    /// The digest of the UTF-8 bytes of `text`.
    package static func hash(utf8 text: String) -> [UInt8] {
        var text = text
        return text.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// The digest of a raw byte span.
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
            _ = idtk_sha256(bytes.baseAddress, bytes.count, out.baseAddress)
            initialized = byteCount
        }
    }

    /// Writes the digest of `bytes` to `digest`, which must hold at least ``byteCount`` bytes.
    package static func hash(_ bytes: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= byteCount, "a SHA-256 digest needs \(byteCount) bytes")
        _ = idtk_sha256(bytes.baseAddress, bytes.count, digest.baseAddress?.assumingMemoryBound(to: UInt8.self))
    }

    /// Writes `bytes` to `hex` as lowercase hexadecimal digits, two per byte (`hex` holds at least twice as
    /// many bytes). Four bytes at a time: each spread to its own 16-bit lane, its nibbles split into the lane's
    /// two bytes (high nibble first), and every nibble turned into its digit at once (`d + '0'`, plus 39 when
    /// `d` is 10 or more, which `(d + 6) >> 4` flags).
    @inlinable
    package static func writeLowercaseHex(_ bytes: UnsafeRawBufferPointer, into hex: UnsafeMutableRawBufferPointer) {
        precondition(hex.count >= 2 * bytes.count, "hex digits need two bytes per byte")
        let ones: UInt64 = 0x0101_0101_0101_0101
        var i = 0
        while bytes.count &- i >= 4 {
            var v = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt32.self)))
            v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF
            v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF
            let nibbles = ((v >> 4) & 0x000F_000F_000F_000F) | ((v & 0x000F_000F_000F_000F) << 8)
            let letters = ((nibbles &+ ones &* 6) >> 4) & ones
            let digits = nibbles &+ ones &* 0x30 &+ letters &* 39
            hex.storeBytes(of: digits.littleEndian, toByteOffset: 2 &* i, as: UInt64.self)
            i &+= 4
        }
        while i < bytes.count {
            let byte = bytes[i]
            hex[2 &* i] = Hex.digit(byte >> 4)
            hex[2 &* i &+ 1] = Hex.digit(byte)
            i &+= 1
        }
    }

    /// The digest of the UTF-8 bytes of `text` as 64 lowercase hexadecimal digits.
    package static func hexDigest(utf8 text: String) -> String {
        hash(utf8: text).lowercaseHex
    }
}

extension Array where Element == UInt8 {
    /// The bytes as lowercase hexadecimal digits, two per byte.
    package var lowercaseHex: String {
        String(unsafeUninitializedCapacity: count * 2) { out in
            withUnsafeBytes { SHA256.writeLowercaseHex($0, into: UnsafeMutableRawBufferPointer(out)) }
            return count * 2
        }
    }
}
