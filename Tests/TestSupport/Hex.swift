/// Hex decoding for Wycheproof's `msg`, `sig` and key fields.
public enum Hex {
    public static func decode(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        precondition(digits.count % 2 == 0, "odd-length hex")
        var out = [UInt8]()
        out.reserveCapacity(digits.count / 2)
        func value(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: preconditionFailure("not a hex digit")
            }
        }
        var k = 0
        while k < digits.count {
            out.append(value(digits[k]) << 4 | value(digits[k + 1]))
            k += 2
        }
        return out
    }

    /// A big-endian integer as exactly `width` bytes (Wycheproof writes EC coordinates with a sign byte or
    /// without leading zeros).
    public static func fixedWidth(_ text: String, _ width: Int) -> [UInt8] {
        let bytes = Array(decode(text).drop(while: { $0 == 0 }))
        precondition(bytes.count <= width, "integer wider than \(width) bytes")
        return [UInt8](repeating: 0, count: width - bytes.count) + bytes
    }

    /// The sum of two big-endian integers of the same width, in that width; nil when it overflows.
    public static func sum(_ a: [UInt8], _ b: [UInt8]) -> [UInt8]? {
        precondition(a.count == b.count, "widths differ")
        var out = [UInt8](repeating: 0, count: a.count)
        var carry = 0
        for k in stride(from: a.count - 1, through: 0, by: -1) {
            let sum = Int(a[k]) + Int(b[k]) + carry
            out[k] = UInt8(sum & 0xFF)
            carry = sum >> 8
        }
        return carry == 0 ? out : nil
    }
}
