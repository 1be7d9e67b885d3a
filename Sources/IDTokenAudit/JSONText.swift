/// Appends JSON text to a byte buffer, for the audit's writers: no Foundation, no intermediate strings.
enum JSONText {
    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string literal.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(0x22)
        // Most values (issuers, subjects, key IDs) need no escaping: copy them in one piece.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) {
            out.append(contentsOf: text.utf8)
            out.append(0x22)
            return
        }
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

    static func appendOptionalString(_ text: String?, to out: inout [UInt8]) {
        if let text { appendString(text, to: &out) } else { appendRaw("null", to: &out) }
    }

    static func appendRaw(_ text: String, to out: inout [UInt8]) {
        out.append(contentsOf: text.utf8)
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
