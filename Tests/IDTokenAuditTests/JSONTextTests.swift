import Foundation
import JOSE
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

    @Test("one hex writer: replay keys' digits and JSON's \\u escapes, checked against the reference")
    func hex() {
        var out: [UInt8] = []
        Hex.appendLowercase([0x00, 0x0F, 0x10, 0x7F, 0xA5, 0xFF], to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "000f107fa5ff")
        let all = (0...255).map { UInt8($0) }
        out = []
        Hex.appendLowercase(all, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == all.map { String(format: "%02x", $0) }.joined())
        // The digest path (four bytes at a time, then the same digits for the rest) agrees at every length.
        for length in 0...13 {
            let bytes = Array(all.reversed().prefix(length))
            #expect(bytes.lowercaseHex == bytes.map { String(format: "%02x", $0) }.joined(), "length \(length)")
        }
        #expect(JSONText.quoted("a\u{01}\u{1F}\u{7F}\"") == "\"a\\u0001\\u001f\\u007f\\\"\"")
        #expect(JSONText.object([("k", JSONText.optional(nil)), ("s", JSONText.optional("v"))]) == "{\"k\":null,\"s\":\"v\"}")
    }
}
