import Foundation
@testable import IDTokenAudit
import IDTokenKit
import JOSE
import Testing

@Suite("Reading records from lines")
struct RecordExtractorTests {
    let token = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"

    func extract(_ text: String, number: Int = 1) -> AuditRecord? {
        RecordExtractor().extract(RawLine(number: number, bytes: Array(text.utf8), length: text.utf8.count))
    }

    @Test("the word-at-a-time printable check agrees with a byte-by-byte one for every byte value at every position")
    func printableWord() {
        for length in 1...19 {
            for position in 0..<length {
                for value in 0...255 {
                    var bytes = Array(repeating: UInt8(ascii: "e"), count: length)
                    bytes[position] = UInt8(value)
                    let expected = bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
                    #expect(RecordExtractor.isPrintableWord(bytes[...]) == expected, "length \(length), byte \(value) at \(position)")
                    // A slice that does not start at index 0, as a line cut from a chunk of input is.
                    let padded = [0x20] + bytes + [0x20]
                    #expect(RecordExtractor.isPrintableWord(padded[1..<(length + 1)]) == expected)
                }
            }
        }
    }

    /// The token search byte by byte, as the definition says: the first `eyJ` not preceded by a base64url byte,
    /// followed by base64url bytes and at most two dots, with exactly two dots.
    static func referenceFindToken(_ bytes: [UInt8]) -> Range<Int>? {
        var i = 0
        while i + 3 <= bytes.count {
            guard bytes[i] == 0x65, bytes[i + 1] == 0x79, bytes[i + 2] == 0x4A,
                  i == 0 || !RecordExtractor.isBase64URL(bytes[i - 1]) else {
                i += 1
                continue
            }
            var j = i + 3, dots = 0
            while j < bytes.count {
                if RecordExtractor.isBase64URL(bytes[j]) { j += 1 } else if bytes[j] == 0x2E && dots < 2 { dots += 1; j += 1 } else { break }
            }
            if dots == 2 { return i..<j }
            i += 3
        }
        return nil
    }

    @Test("the token search agrees with a byte-by-byte search on random text around tokens of every length")
    func tokenSearch() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ n: Int) -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % UInt64(n))
        }
        let alphabet = Array("ABCxyz019-_.eyJ \"=/?&;:,\u{7F}".utf8) + [0x00, 0x80, 0xC3, 0xFF]
        for round in 0..<3000 {
            var bytes: [UInt8] = []
            for _ in 0..<next(6) {
                if next(3) == 0 { bytes += Array("eyJ".utf8) }
                for _ in 0..<next(70) {
                    bytes.append(next(4) == 0 ? alphabet[next(alphabet.count)] : Array("abcXYZ0189-_".utf8)[next(12)])
                }
            }
            let expected = RecordExtractorTests.referenceFindToken(bytes)
            #expect(RecordExtractor.findToken(bytes[...]) == expected, "round \(round): \(bytes)")
            // The same bytes as a slice of a larger array, as a line cut from a chunk is.
            let padded = [0x41] + bytes + [0x41]
            let shifted = RecordExtractor.findToken(padded[1..<(bytes.count + 1)]).map { ($0.lowerBound - 1)..<($0.upperBound - 1) }
            #expect(shifted == expected, "round \(round), as a slice")
        }
    }

    @Test("the sixteen-byte base64url run ends where the byte check says, for every byte value at every position")
    func base64URLRun() {
        expectRunEndsWhereBytesSay(fills: "Qa09-_zZ", belongs: RecordExtractor.isBase64URL) { base, count in
            ByteSearch.base64URLRunEnd(in: base, from: 0, to: count)
        }
    }

    @Test("a bare token is the whole line")
    func bareToken() throws {
        let record = try #require(extract("  \(token)\t", number: 9))
        #expect(record.form == .bareToken)
        #expect(record.token == token)
        #expect(record.line == 9)
        #expect(record.at == nil)
    }

    @Test("a one-word line is judged whole, so a padded token is not trimmed into shape")
    func paddedTokenIsJudgedWhole() throws {
        let record = try #require(extract(token + "=="))
        #expect(record.form == .bareToken)
        #expect(record.token == token + "==")
        let damaged = try #require(extract("abc.def"))
        #expect(damaged.token == "abc.def")
    }

    @Test("a JSON record with token, at as Unix seconds, id and nonce")
    func jsonRecord() throws {
        let record = try #require(extract("{\"id\":\"req-1\",\"at\":1767225600.5,\"nonce\":\"n-1\",\"token\":\"\(token)\"}"))
        #expect(record.form == .json)
        #expect(record.token == token)
        #expect(record.at == 1_767_225_600.5)
        #expect(record.id == .string("req-1"))
        #expect(record.nonce == "n-1")
        #expect(record.problem == nil)
    }

    @Test("a JSON record with at in ISO 8601 and a numeric id")
    func jsonISOTime() throws {
        let record = try #require(extract("{\"token\":\"\(token)\",\"at\":\"2026-01-01T01:00:00+01:00\",\"id\":42}"))
        #expect(record.at == 1_767_225_600)
        #expect(record.id == .json("42"))
    }

    @Test("an access-log line: the Bearer token, and the leading ISO 8601 time as at")
    func accessLog() throws {
        let record = try #require(extract("2026-01-01T10:00:00Z 203.0.113.9 POST /api 200 \"Authorization: Bearer \(token)\" ua=x"))
        #expect(record.form == .text)
        #expect(record.token == token)
        #expect(record.at == 1_767_261_600)
    }

    @Test("a Common Log Format line: the token in a query string, the bracketed time as at")
    func commonLog() throws {
        let record = try #require(extract("198.51.100.7 - - [01/Jan/2026:11:00:00 +0100] \"GET /cb?id_token=\(token)&state=1 HTTP/1.1\" 302 0"))
        #expect(record.token == token)
        #expect(record.at == 1_767_261_600)
    }

    @Test("a text line without a time keeps at empty, so the audit's time applies")
    func textWithoutTime() throws {
        let record = try #require(extract("user signed in with \(token) today"))
        #expect(record.token == token)
        #expect(record.at == nil)
        let word = try #require(extract("id_token=\(token)"))
        #expect(word.form == .text)
        #expect(word.token == token)
    }

    @Test("blank lines are skipped")
    func blankLines() {
        #expect(extract("") == nil)
        #expect(extract(" \t \r") == nil)
    }

    @Test("unreadable lines are malformed, with their line number in the message",
          arguments: [
            "just some words",
            "{\"token\": 42}",
            "{\"at\": 1}",
            "{\"token\": \"x.y.z\", \"at\": \"yesterday\"}",
            "{\"token\": \"x.y.z\", \"nonce\": 7}",
            "{\"token\": \"x.y.z\"",
            "{\"token\": \"a\", \"token\": \"b\"}",
          ])
    func malformed(_ text: String) throws {
        let record = try #require(extract(text, number: 17))
        let problem = try #require(record.problem)
        #expect(problem.code == .malformed)
        #expect(problem.message.contains("17"))
        #expect(record.token == nil)
    }

    @Test("binary junk is malformed, named as binary data")
    func binary() throws {
        let bytes: [UInt8] = [0x00, 0xFF, 0xFE, 0x41, 0x01, 0xC3, 0x28, 0x7F, 0x20, 0x9F]
        let record = try #require(RecordExtractor().extract(RawLine(number: 3, bytes: bytes, length: bytes.count)))
        #expect(record.problem?.code == .malformed)
        #expect(record.problem?.message.contains("binary") == true)
    }

    @Test("a line over the cap is malformed without being read")
    func overLong() throws {
        let record = try #require(RecordExtractor().extract(RawLine(number: 5, bytes: Array(repeating: 0x41, count: 10), length: 50_000_000)))
        #expect(record.problem?.code == .malformed)
        #expect(record.problem?.message.contains("50000000 bytes") == true)
    }

    @Test("a line cut by an input error is malformed")
    func cutLine() throws {
        let record = try #require(RecordExtractor().extract(RawLine(number: 8, bytes: Array(token.utf8), length: token.utf8.count, cutByInputError: true)))
        #expect(record.problem?.code == .malformed)
    }
}
