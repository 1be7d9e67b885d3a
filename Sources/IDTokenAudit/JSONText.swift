/// Appends JSON text to a byte buffer, for the audit's writers: no Foundation, no intermediate strings.
enum JSONText {
    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string literal.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        // Most values (issuers, subjects, key IDs) need no escaping: copy them in one piece, from the string's
        // own storage (walking a String's UTF-8 view byte by byte costs several times more).
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !bytes.contains(where: needsEscape) else { return false }
            out.append(0x22)
            out.append(contentsOf: bytes)
            out.append(0x22)
            return true
        }
        if copied == true { return }
        out.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(0x6E)
            case 0x0D: out.append(0x5C); out.append(0x72)
            case 0x09: out.append(0x5C); out.append(0x74)
            case 0x00..<0x20, 0x7F:
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }

    @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F }

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

    /// A Swift string as a JSON literal.
    static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
