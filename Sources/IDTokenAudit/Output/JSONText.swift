import JOSE

/// The JSON text the project writes as output — the audit's records and summary, and `idtoken`'s answers — is
/// written here, appended to byte buffers or joined from pieces: no Foundation, and claims copied as the token
/// carries them. String literals come from JOSE (`JSONText.appendString`, `quoted`), which also writes a parsed
/// document back as text.
extension JSONText {
    /// `value` as a JSON string literal, or `null`.
    package static func optional(_ value: String?) -> String { value.map(quoted) ?? "null" }

    /// An object from members whose values are already JSON text, in order.
    package static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

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
        if let text { appendPlainString(text, to: &out) } else { appendLiteral("null", to: &out) }
    }

    /// Appends `text` as a JSON string literal, as `appendString` does. The usual value (an issuer, a subject, a
    /// key ID) holds nothing to escape, which is checked eight bytes at a time and then copied in one piece;
    /// a value that needs escapes goes to `appendString`.
    static func appendPlainString(_ text: String, to out: inout [UInt8]) {
        var text = text
        let copied = text.withUTF8 { bytes -> Bool in
            guard !needsEscape(UnsafeRawBufferPointer(bytes)) else { return false }
            out.append(0x22)
            out.append(contentsOf: bytes)
            out.append(0x22)
            return true
        }
        if !copied { appendString(text, to: &out) }
    }

    /// Whether any byte is one that a JSON string literal must escape here: below 0x20, `"`, `\\` or DEL.
    /// Sixteen bytes at a time (two words, one branch) while more than sixteen are left, then eight; the last word
    /// overlaps the one before when the length is not a multiple of eight (a byte looked at twice does not change a
    /// yes/no answer).
    static func needsEscape(_ bytes: UnsafeRawBufferPointer) -> Bool {
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
            if wordNeedsEscape(bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return true }
            i += 8
        }
        return wordNeedsEscape(bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
    }

    /// Whether any byte of `word` is below 0x20, `"`, `\\` or DEL: the classic "has a byte less than n" test
    /// (exact as a yes/no answer for n up to 0x80) on the word itself and on the word xor each byte sought.
    @inline(__always)
    private static func wordNeedsEscape(_ word: UInt64) -> Bool { escapeBits(word) != 0 }

    /// Non-zero when any byte of `word` needs an escape (see ``wordNeedsEscape(_:)``).
    @inline(__always)
    private static func escapeBits(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (0x22 &* ones), backslash = word ^ (0x5C &* ones), del = word ^ (0x7F &* ones)
        let found = ((word &- 0x20 &* ones) & ~word) | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
            | ((del &- ones) & ~del)
        return found & (0x80 &* ones)
    }

    static func appendRaw(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    static func appendLiteral(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// A number as JSON: integers without a fraction, others with up to millisecond precision; null if not finite.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let rounded = (value * 1000).rounded() / 1000
        return "\(rounded)"
    }
}
