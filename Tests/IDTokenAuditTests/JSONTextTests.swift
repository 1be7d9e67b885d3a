@testable import IDTokenAudit
import IDTokenKit
import Testing

@Suite("JSON string literals in the audit's output")
struct JSONTextTests {
    /// The bytes a JSON string literal must escape in the audit's output, one at a time.
    static func needsEscapeByteByByte(_ bytes: [UInt8]) -> Bool {
        bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }
    }

    @Test("the word-at-a-time escape check agrees with a byte-by-byte one for every byte value at every position")
    func escapeCheck() {
        for length in 1...40 {
            for position in 0..<length {
                for value in 0...255 {
                    var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = UInt8(value)
                    let fast = bytes.withUnsafeBytes { JSONText.needsEscape($0) }
                    #expect(fast == JSONTextTests.needsEscapeByteByByte(bytes), "length \(length), byte \(value) at \(position)")
                }
            }
        }
        #expect(!Array<UInt8>().withUnsafeBytes { JSONText.needsEscape($0) })
    }

    @Test("a plain string is written as the general writer writes it, escapes or not", arguments: [
        "", "a", "https://securetoken.google.com/idtokenkit-sample", "quote \" inside a longer value", "back\\slash",
        "line\nbreak in a value of some length", "tab\t", "del \u{7F} char", "ünïcödé välüé, long enough to span words", "\u{01}",
    ])
    func plainString(_ text: String) {
        var out: [UInt8] = []
        JSONText.appendPlainString(text, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == JSONText.quoted(text))
    }
}
