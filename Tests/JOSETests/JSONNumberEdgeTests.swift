import JOSE
import Testing

/// Numbers at the edges of the reader's fast paths: the eight-digits-at-a-time scan (integers of up to fifteen
/// digits, sixteen bytes readable) and the eight-digit conversion in ``JSONObject/number(_:)``. Every length
/// from one to twenty digits, signed or not, with a leading zero or not, followed by each byte that can end,
/// continue or spoil a number, near the end of the document and far from it; each document is checked against
/// Jansson (same verdict, same values), and accepted integers also against Swift's own parse.
@Suite struct JSONNumberEdgeTests {
    static let followers = ["", ".5", "e3", "E-2", ".", "e", "x", "0", "-", " ", "\t", "/", ":"]

    static func documents() -> [(text: String, literal: String)] {
        var out: [(String, String)] = []
        for length in 1...20 {
            let digits = String((0..<length).map { Character(String(($0 * 7 + 3) % 10)) })
            for lead in ["", "1", "9", "0"] {
                let body = lead.isEmpty ? digits : lead + digits.dropFirst()
                for sign in ["", "-"] {
                    for follower in followers {
                        let literal = sign + body + follower
                        // At the end of the document (few readable bytes) and with a long member after it.
                        out.append(("{\"n\":\(literal)}", literal))
                        out.append(("{\"n\":\(literal),\"padding\":\"0123456789abcdef0123456789\"}", literal))
                        out.append(("[{\"n\":\(literal)}]", literal))
                    }
                }
            }
        }
        return out
    }

    @Test func everyLengthAgreesWithJansson() {
        var problems: [String] = []
        var accepted = 0
        for (text, _) in Self.documents() {
            if let problem = JSONDifferentialTests.disagreement(Array(text.utf8)) { problems.append("\(text): \(problem)") }
            if (try? JSONObject.parse(text)) != nil { accepted += 1 }
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        #expect(accepted > 500, "the cases exercise accepted numbers too (\(accepted))")
    }

    @Test func integersReadInPlaceEqualSwiftsParse() throws {
        var checked = 0
        for (text, literal) in Self.documents() {
            guard let object = try? JSONObject.parse(text), let expected = Int64(literal) else { continue }
            #expect(object.number(JSONKey("n")) == .integer(expected), "\(text)")
            #expect(object["n"]?.int64 == expected, "\(text)")
            checked += 1
        }
        #expect(checked > 150)
    }

    @Test func eightDigitBlocksAtEveryValue() throws {
        // Each digit value at each of the eight positions of both blocks of a sixteen-digit integer.
        for position in 0..<16 {
            for digit in 0...9 {
                var digits = Array("1234567890123456")
                digits[position] = Character(String(digit))
                if digits[0] == "0" { digits[0] = "7" }
                let literal = String(digits)
                let object = try JSONObject.parse("{\"n\":\(literal)}")
                #expect(object.number(JSONKey("n")) == .integer(Int64(literal)!), "\(literal)")
            }
        }
    }
}
