/// Writes JSON text by hand, for everything the project writes as JSON: the key cache file, the audit's records,
/// summary and merges, and `idtoken`'s answers. No Foundation, and values copied as they are held (a claim as the
/// token carries it): string literals appended to byte buffers or joined from pieces.
///
/// Package access: the writer serves the project's own modules and is not part of IDTokenKit's API.
package enum JSONText {
    /// Appends `text` as a JSON string literal: `"` and `\` with a backslash, LF, CR and tab by their short escapes,
    /// other control characters and DEL as `\u00XX`, so that the output is one line whatever the value holds; the
    /// rest, UTF-8 included, as it is.
    package static func appendString(_ text: String, to out: inout [UInt8]) {
        // The usual value (an issuer, a subject, a key ID) holds nothing to escape: checked eight bytes at a time
        // and copied in one piece, from the string's own storage (walking a String's UTF-8 view byte by byte
        // costs several times more).
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !needsEscape(UnsafeRawBufferPointer(bytes)) else { return false }
            out.append(0x22)
            out.append(contentsOf: bytes)
            out.append(0x22)
            return true
        }
        if copied == true { return }
        out.append(0x22)
        for byte in text.utf8 { escape(byte) { out.append($0) } }
        out.append(0x22)
    }

    /// Hands `emit` the bytes that stand for `byte` inside a JSON string literal (see ``appendString(_:to:)``):
    /// the one escape table, shared with the audit's record writer, which writes through a pointer.
    @inlinable @inline(__always)
    package static func escape(_ byte: UInt8, _ emit: (UInt8) -> Void) {
        switch byte {
        case 0x22: emit(0x5C); emit(0x22)
        case 0x5C: emit(0x5C); emit(0x5C)
        case 0x0A: emit(0x5C); emit(0x6E)
        case 0x0D: emit(0x5C); emit(0x72)
        case 0x09: emit(0x5C); emit(0x74)
        case 0x00..<0x20, 0x7F:
            emit(0x5C); emit(0x75); emit(0x30); emit(0x30)
            emit(Hex.digit(byte >> 4)); emit(Hex.digit(byte))
        default: emit(byte)
        }
    }

    /// `text` as a JSON string literal.
    package static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` as a JSON string literal, or `null`.
    package static func optional(_ value: String?) -> String { value.map(quoted) ?? "null" }

    /// An object from members whose values are already JSON text, in order.
    package static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// A number as JSON: integers without a fraction, others with up to millisecond precision; null if not finite.
    package static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let rounded = (value * 1000).rounded() / 1000
        return "\(rounded)"
    }

    /// Appends text that is already JSON.
    package static func appendLiteral(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// Whether any byte is one that a JSON string literal must escape here: below 0x20, `"`, `\\` or DEL.
    /// Sixteen bytes at a time (two words, one branch) while more than sixteen are left, then eight; the last word
    /// overlaps the one before when the length is not a multiple of eight (a byte looked at twice does not change a
    /// yes/no answer).
    package static func needsEscape(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count >= 8 else {
            for byte in bytes where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { return true }
            return false
        }
        var i = 0
        while i + 16 < count {
            // Two words, one branch.
            let found = escapeBits(bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                | escapeBits(bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self))
            if found != 0 { return true }
            i += 16
        }
        while i + 8 < count {
            if escapeBits(bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) != 0 { return true }
            i += 8
        }
        return escapeBits(bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) != 0
    }

    /// Non-zero when any byte of `word` is below 0x20, `"`, `\\` or DEL: the classic "has a byte less than n" test
    /// (exact as a yes/no answer for n up to 0x80) on the word itself and on the word xor each byte sought.
    @inline(__always)
    private static func escapeBits(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (0x22 &* ones), backslash = word ^ (0x5C &* ones), del = word ^ (0x7F &* ones)
        let found = ((word &- 0x20 &* ones) & ~word) | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
            | ((del &- ones) & ~del)
        return found & (0x80 &* ones)
    }
}

extension JSONTree {
    /// The tree written back as compact JSON text, members in their stored order: for handing a parsed document
    /// (a JWK inside a test-vector file) to an API that takes text.
    package var jsonText: String {
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
