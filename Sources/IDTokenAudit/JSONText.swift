import JOSE

/// The audit's writers append JSON text to byte buffers: no Foundation, no intermediate strings. String literals
/// come from JOSE (`JSONText.appendString`, `quoted`).
extension JSONText {
    /// Appends an integer's decimal digits, without making a String of them.
    static func appendInt(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2D) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)      // up to 20 digits, filled from the right
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                count += 1
                buffer[24 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: buffer[(24 - count)...])
        }
    }

    /// Appends ``number(_:)``, writing integers (the usual case: Unix seconds) without a String.
    static func appendNumber(_ value: Double, to out: inout [UInt8]) {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            appendInt(Int(value), to: &out)
        } else {
            appendRaw(number(value), to: &out)
        }
    }

    static func appendOptionalString(_ text: String?, to out: inout [UInt8]) {
        if let text { appendString(text, to: &out) } else { appendRaw("null", to: &out) }
    }

    static func appendRaw(_ text: String, to out: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil { out.append(contentsOf: text.utf8) }
    }

    static func appendKey(_ key: StaticString, to out: inout [UInt8], first: Bool = false) {
        if !first { out.append(0x2C) }
        out.append(0x22)
        key.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(0x22)
        out.append(0x3A)
    }

    /// A number as JSON: integers without a fraction, others with up to millisecond precision; null if not finite.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let rounded = (value * 1000).rounded() / 1000
        return "\(rounded)"
    }
}
