internal import CJOSEShims

/// Strict base64url (RFC 4648 §5) as JWS requires it: the alphabet `A–Z a–z 0–9 - _`, no padding, no
/// whitespace, and the unused low bits of the last character must be zero, so that every byte string has
/// exactly one encoding.
public enum Base64URL {
    /// 0xFF marks a byte that is not in the alphabet.
    @usableFromInline static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    @usableFromInline static let encodeTable: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The number of bytes `count` base64url characters decode to, or nil if no canonical encoding has that
    /// length (a remainder of one character mod 4).
    @inlinable public static func decodedCount(forEncodedCount count: Int) -> Int? {
        switch count & 3 {
        case 0: return count / 4 * 3
        case 2: return count / 4 * 3 + 1
        case 3: return count / 4 * 3 + 2
        default: return nil
        }
    }

    /// Four tables, one per position in a quad, holding each character's sextet already moved to where it lands
    /// in the three decoded bytes, laid out as they sit in memory (a little-endian word: first byte lowest);
    /// characters outside the alphabet set bits in the fourth byte. A quad then decodes with four look-ups,
    /// three ORs and one 4-byte store, whose fourth byte the next quad overwrites. Allocated once for the life
    /// of the process.
    @usableFromInline nonisolated(unsafe) static let quadTables: UnsafePointer<UInt32> = {
        let tables = UnsafeMutablePointer<UInt32>.allocate(capacity: 4 * 256)
        for byte in 0..<256 {
            let v = decodeTable[byte]
            for position in 0..<4 {
                // The sextet's place in the 24-bit big-endian group, moved to bytes 0–2 of a little-endian word.
                let placed = (UInt32(v) << (18 - 6 * position)) << 8
                tables[position * 256 + byte] = v == 0xFF ? 0xFF00_0000 : placed.byteSwapped
            }
        }
        return UnsafePointer(tables)
    }()

    /// Decodes `source` into `destination`, which must hold at least `decodedCount(forEncodedCount:)` bytes.
    /// Returns the number of bytes written, or nil when the input is not canonical base64url.
    ///
    /// Whole 16-character blocks go through SIMD code when the CPU has it (`idtk_base64url_decode_blocks`,
    /// AVX2 or SSSE3 on x86-64: a fraction of the instructions of the table loop); the rest, including the last
    /// characters whose unused bits must be zero, through the tables below.
    package static func decode(_ source: UnsafeBufferPointer<UInt8>, into destination: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        guard let outCount = decodedCount(forEncodedCount: source.count), destination.count >= outCount else { return nil }
        guard let src = source.baseAddress, let dst = destination.baseAddress else { return outCount == 0 ? 0 : nil }
        let t = quadTables
        let full = source.count & ~3
        var invalid: Int32 = 0
        var i = idtk_base64url_decode_blocks(src, full, dst, destination.count, &invalid)
        var o = i / 4 * 3
        var bad: UInt32 = invalid == 0 ? 0 : 0xFF00_0000
        @inline(__always) func quad(_ i: Int) -> UInt32 {
            t[Int(src[i])] | t[256 + Int(src[i + 1])] | t[512 + Int(src[i + 2])] | t[768 + Int(src[i + 3])]
        }
        // Whole 4-byte stores while the destination has a byte to spare after the three written.
        let wordEnd = min(full, (destination.count - 1) / 3 * 4)
        while i + 8 <= wordEnd {
            let x = quad(i)
            let y = quad(i + 4)
            bad |= x | y
            UnsafeMutableRawPointer(dst + o).storeBytes(of: x.littleEndian, as: UInt32.self)
            UnsafeMutableRawPointer(dst + o + 3).storeBytes(of: y.littleEndian, as: UInt32.self)
            i += 8
            o += 6
        }
        while i < full {
            let x = quad(i)
            bad |= x
            dst[o] = UInt8(truncatingIfNeeded: x)
            dst[o + 1] = UInt8(truncatingIfNeeded: x >> 8)
            dst[o + 2] = UInt8(truncatingIfNeeded: x >> 16)
            i += 4
            o += 3
        }
        switch source.count - full {
        case 2:
            let x = t[Int(src[i])] | t[256 + Int(src[i + 1])]
            // The last character's low four bits fall outside the one decoded byte: canonical means zero.
            bad |= x | (x & 0x0000_F000 == 0 ? 0 : 0xFF00_0000)
            dst[o] = UInt8(truncatingIfNeeded: x)
            o += 1
        case 3:
            let x = t[Int(src[i])] | t[256 + Int(src[i + 1])] | t[512 + Int(src[i + 2])]
            bad |= x | (x & 0x00C0_0000 == 0 ? 0 : 0xFF00_0000)
            dst[o] = UInt8(truncatingIfNeeded: x)
            dst[o + 1] = UInt8(truncatingIfNeeded: x >> 8)
            o += 2
        default:
            break
        }
        return bad & 0xFF00_0000 == 0 ? o : nil
    }

    /// Decodes a base64url string; nil when it is not canonical base64url.
    public static func decode<S: StringProtocol>(_ string: S) -> [UInt8]? {
        decode(bytes: Array(string.utf8))
    }

    /// Decodes base64url bytes; nil when they are not canonical base64url.
    public static func decode(bytes: [UInt8]) -> [UInt8]? {
        guard let count = decodedCount(forEncodedCount: bytes.count) else { return nil }
        var failed = false
        let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let written = bytes.withUnsafeBufferPointer { decode($0, into: buffer) }
            if let written { initialized = written } else { initialized = 0; failed = true }
        }
        return failed ? nil : out
    }

    /// Encodes bytes as base64url without padding.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= input.count {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out.append(encodeTable[Int(n >> 18 & 63)])
            out.append(encodeTable[Int(n >> 12 & 63)])
            out.append(encodeTable[Int(n >> 6 & 63)])
            out.append(encodeTable[Int(n & 63)])
            i += 3
        }
        switch input.count - i {
        case 1:
            let n = UInt32(input[i]) << 16
            out.append(encodeTable[Int(n >> 18 & 63)])
            out.append(encodeTable[Int(n >> 12 & 63)])
        case 2:
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
            out.append(encodeTable[Int(n >> 18 & 63)])
            out.append(encodeTable[Int(n >> 12 & 63)])
            out.append(encodeTable[Int(n >> 6 & 63)])
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Base64URL {
    /// Whether `span` is canonical base64url, without decoding it.
    @inlinable
    package static func isCanonical(_ span: UnsafeBufferPointer<UInt8>) -> Bool {
        guard decodedCount(forEncodedCount: span.count) != nil else { return false }
        return decodeTable.withUnsafeBufferPointer { table in
            var bad: UInt8 = 0
            for byte in span { bad |= table[Int(byte)] }
            guard bad & 0xC0 == 0 else { return false }
            switch span.count & 3 {
            case 2: return table[Int(span[span.count - 1])] & 0x0F == 0
            case 3: return table[Int(span[span.count - 1])] & 0x03 == 0
            default: return true
            }
        }
    }
}
