import JOSE
import Testing

/// Strings at the edges of the reader's sixteen-byte scan: every length from 0 to 40, with each kind of byte
/// that stops the scan (an escape, a control character, DEL, two-, three- and four-byte UTF-8, malformed UTF-8,
/// a raw quote) at every position, as a member value, a member name and an array element, at the end of the
/// document and before more text. Each document is checked against Jansson (same verdict, same values).
@Suite struct JSONStringEdgeTests {
    static let inserts: [[UInt8]] = [
        Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\u00e9"#.utf8), Array(#"\ud83d\ude00"#.utf8), Array(#"\/"#.utf8),
        [0x09], [0x1F], [0x7F], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80],
        [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xFF], [0x22], Array(#"\x"#.utf8), Array(#"\u12"#.utf8),
    ]

    static func body(length: Int, insert: [UInt8], at position: Int) -> [UInt8] {
        var plain = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        plain.insert(contentsOf: insert, at: min(position, plain.count))
        return plain
    }

    @Test func everyPositionAgreesWithJansson() {
        var problems: [String] = []
        var accepted = 0
        var documents = 0
        for length in 0...40 {
            for insert in Self.inserts {
                for position in Set([0, 1, 7, 8, 15, 16, 17, length / 2, length]) where position <= length {
                    let s = Self.body(length: length, insert: insert, at: position)
                    let quoted = [UInt8(ascii: "\"")] + s + [UInt8(ascii: "\"")]
                    let forms: [[UInt8]] = [
                        Array(#"{"v":"#.utf8) + quoted + Array("}".utf8),
                        Array(#"{"v":"#.utf8) + quoted + Array(#","after":"0123456789abcdefghij"}"#.utf8),
                        Array("{".utf8) + quoted + Array(#":1,"z":2}"#.utf8),
                        Array(#"{"a":["#.utf8) + quoted + Array("]}".utf8),
                    ]
                    for bytes in forms {
                        documents += 1
                        if let problem = JSONDifferentialTests.disagreement(bytes) {
                            problems.append("\(String(decoding: bytes, as: UTF8.self)): \(problem)")
                        }
                        if (try? JSONObject.parse(bytes)) != nil { accepted += 1 }
                    }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        #expect(accepted > documents / 3 && accepted < documents, "\(accepted) of \(documents) accepted")
    }
}
