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

    /// Decodes `source` into `destination`, which must hold at least `decodedCount(forEncodedCount:)` bytes.
    /// Returns the number of bytes written, or nil when the input is not canonical base64url.
    @inlinable
    public static func decode(_ source: UnsafeBufferPointer<UInt8>, into destination: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        guard let outCount = decodedCount(forEncodedCount: source.count), destination.count >= outCount else { return nil }
        return decodeTable.withUnsafeBufferPointer { table -> Int? in
            var i = 0
            var o = 0
            let full = source.count & ~3
            var bad: UInt8 = 0
            while i < full {
                let a = table[Int(source[i])], b = table[Int(source[i + 1])]
                let c = table[Int(source[i + 2])], d = table[Int(source[i + 3])]
                bad |= a | b | c | d
                destination[o] = a << 2 | b >> 4
                destination[o + 1] = b << 4 | c >> 2
                destination[o + 2] = c << 6 | d
                i += 4
                o += 3
            }
            // 0xFF has the high bits set; every valid sextet is below 64.
            if bad & 0xC0 != 0 { return nil }
            switch source.count - full {
            case 2:
                let a = table[Int(source[i])], b = table[Int(source[i + 1])]
                if (a | b) & 0xC0 != 0 || b & 0x0F != 0 { return nil }
                destination[o] = a << 2 | b >> 4
                o += 1
            case 3:
                let a = table[Int(source[i])], b = table[Int(source[i + 1])], c = table[Int(source[i + 2])]
                if (a | b | c) & 0xC0 != 0 || c & 0x03 != 0 { return nil }
                destination[o] = a << 2 | b >> 4
                destination[o + 1] = b << 4 | c >> 2
                o += 2
            default:
                break
            }
            return o
        }
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
