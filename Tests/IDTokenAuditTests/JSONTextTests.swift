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

    /// A JSON string literal as the output writes it, escaped one byte at a time from the table spelled out.
    static func literalByteByByte(_ text: String) -> String {
        var out: [UInt8] = [0x22]
        for byte in text.utf8 {
            switch byte {
            case 0x22: out += Array(#"\""#.utf8)
            case 0x5C: out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x00..<0x20, 0x7F: out += Array(String(format: "\\u%04x", Int(byte)).utf8)
            default: out.append(byte)
            }
        }
        out.append(0x22)
        return String(decoding: out, as: UTF8.self)
    }

    @Test("the JSON text writer and the audit's record writer write a string literal alike, escapes or not", arguments: [
        "", "a", "https://securetoken.google.com/idtokenkit-sample", "quote \" inside a longer value", "back\\slash",
        "line\nbreak in a value of some length", "tab\t", "cr\r", "del \u{7F} char", "ünïcödé välüé, long enough to span words",
        "\u{01}", "\u{00}\u{1F} controls \u{08}\u{0C} past the first word",
    ])
    func stringLiteral(_ text: String) {
        let expected = JSONTextTests.literalByteByByte(text)
        var out: [UInt8] = []
        JSONText.appendString(text, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == expected)
        #expect(JSONText.quoted(text) == expected)
        var record: [UInt8] = Array("x".utf8)
        RecordWriter.write(into: &record, bound: 2 + 6 * text.utf8.count) { $0.string(text) }
        #expect(String(decoding: record, as: UTF8.self) == "x" + expected)
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
