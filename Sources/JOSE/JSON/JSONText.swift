/// Writes JSON text by hand, for the command line's and the audit's output and for handing a parsed document back
/// to an API that takes bytes: string literals with the escapes JSON requires, and a ``JSONTree`` as compact text.
public enum JSONText {
    /// Appends `text` as a JSON string literal. Control characters and DEL are written as `\uXXXX` (or their
    /// short escapes), so the output is one line whatever the value holds.
    public static func appendString(_ text: String, to out: inout [UInt8]) {
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
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, Hex.digit(byte >> 4), Hex.digit(byte)])
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F }

    /// `text` as a JSON string literal.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

extension JSONTree {
    /// The tree written back as compact JSON text, members in their stored order.
    public var jsonText: String {
        switch self {
        case .object(let members):
            return "{" + members.map { JSONText.quoted($0.key) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
        case .array(let elements):
            return "[" + elements.map(\.jsonText).joined(separator: ",") + "]"
        case .string(let s): return JSONText.quoted(s)
        case .integer(let i): return String(i)
        case .real(let d): return "\(d)"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        }
    }
}
