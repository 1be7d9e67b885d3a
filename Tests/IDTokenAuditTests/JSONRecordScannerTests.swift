@testable import IDTokenAudit
import IDTokenKit
import Testing

@Suite("JSON record lines read without the general JSON reader")
struct JSONRecordScannerTests {
    let token = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"

    func scan(_ text: String) -> JSONRecordScanner.Fields? {
        Array(text.utf8).withUnsafeBufferPointer(JSONRecordScanner.scan)
    }

    /// The record as the extractor reads it (fast path or not) and as the strict JSON reader alone reads it; nil
    /// when the line is not a JSON record (it does not start with `{`).
    func bothReadings(_ text: String) -> (AuditRecord?, AuditRecord)? {
        let bytes = Array(text.utf8)
        let extractor = RecordExtractor()
        var start = 0, end = bytes.count
        while start < end, RecordExtractor.isBlank(bytes[start]) { start += 1 }
        while end > start, RecordExtractor.isBlank(bytes[end - 1]) { end -= 1 }
        guard start < end, bytes[start] == UInt8(ascii: "{") else { return nil }
        return (extractor.extract(RawLine(number: 3, bytes: bytes, length: bytes.count)),
                extractor.json(Array(bytes[start..<end]), line: 3))
    }

    func expectSameRecord(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let (fast, strict) = bothReadings(text) else { return }
        guard let fast else {
            Issue.record("no record for \(text)", sourceLocation: sourceLocation)
            return
        }
        #expect(fast.form == strict.form, "\(text)", sourceLocation: sourceLocation)
        #expect(fast.id == strict.id, "\(text)", sourceLocation: sourceLocation)
        #expect(fast.token == strict.token, "\(text)", sourceLocation: sourceLocation)
        #expect(fast.at == strict.at || (fast.at?.isNaN == true && strict.at?.isNaN == true), "\(text)", sourceLocation: sourceLocation)
        #expect(fast.nonce == strict.nonce, "\(text)", sourceLocation: sourceLocation)
        #expect(fast.problem?.code == strict.problem?.code, "\(text)", sourceLocation: sourceLocation)
        #expect(fast.problem?.message == strict.problem?.message, "\(text)", sourceLocation: sourceLocation)
    }

    @Test("the generator's record shapes are read by the fast path, with the strict reader's fields")
    func usualShapes() throws {
        let lines = [
            "{\"id\":\"req-000000\",\"at\":1767230251,\"token\":\"\(token)\"}",
            "{\"token\":\"\(token)\"}",
            "{\"id\": 42, \"at\": \"2026-01-01T01:00:00+01:00\", \"nonce\": \"n-1\", \"token\": \"\(token)\"}",
            "{\"at\":-0,\"token\":\"\(token)\",\"id\":\"\"}",
            "{\t\"token\"\t:\t\"\(token)\"\t}",
            "{\"at\":0,\"token\":\"a b ~ ! #$%&'()*+,-./:;<=>?@[]^_`{|}\"}",
        ]
        for line in lines {
            let fields = try #require(scan(line), "\(line)")
            let (_, strict) = try #require(bothReadings(line))
            #expect(String(decoding: Array(line.utf8)[fields.token], as: UTF8.self) == strict.token)
            #expect(fields.id == strict.id)
            #expect(fields.at == strict.at)
            #expect(fields.nonce == strict.nonce)
            expectSameRecord(line)
        }
    }

    @Test("lines of any other shape are left to the strict reader, and read the same")
    func otherShapes() {
        let t = "\"token\":\"\(token)\""
        let lines = [
            "{}", "{ }", "{\(t)", "{\(t)}x", "{\(t)},", "{\(t),}", "{,\(t)}", "{\(t) \"id\":1}",
            "{\(t),\(t)}", "{\"id\":1,\(t),\"id\":2}", "{\(t),\"other\":1}", "{\(t),\"ID\":1}",
            "{\"to\\u006ben\":\"\(token)\"}", "{\"token\":\"eyJ\\/x.y.z\"}", "{\"token\":\"caf\u{E9}.a.b\"}",
            "{\"token\":\"a\u{7F}b\"}", "{\"token\":\"a\u{01}b\"}", "{\"token\":\"a\tb\"}", "{\"token\":1}",
            "{\"token\":null}", "{\"token\":[\"a\"]}", "{\"token\":{\"a\":1}}", "{\"token\":true}",
            "{\(t),\"at\":1.5}", "{\(t),\"at\":1e9}", "{\(t),\"at\":1E9}", "{\(t),\"at\":01}", "{\(t),\"at\":-}",
            "{\(t),\"at\":--1}", "{\(t),\"at\":+1}", "{\(t),\"at\":1234567890123456}", "{\(t),\"at\":123456789012345}",
            "{\(t),\"at\":99999999999999999999999}", "{\(t),\"at\":null}", "{\(t),\"at\":true}", "{\(t),\"at\":\"soon\"}",
            "{\(t),\"at\":\"\"}", "{\(t),\"at\":\"1767225600\"}", "{\(t),\"at\":[1]}", "{\(t),\"at\":1x}",
            "{\(t),\"at\":1\"x\"}", "{\(t),\"id\":null}", "{\(t),\"id\":-7}", "{\(t),\"id\":0.5}", "{\(t),\"id\":{}}",
            "{\(t),\"id\":\"a\\\"b\"}", "{\(t),\"nonce\":5}", "{\(t),\"nonce\":null}", "{\(t),\"nonce\":\"\"}",
            "{\(t),\"nonce\":\"\\u0041\"}", "{\r\(t)}", "{\n\(t)}", "{\(t)\r}", "{\"token\":\"\(token)", "{\"token\"}",
            "{\"token\":}", "{\"token\" \"x\"}", "{\"tok\":\"\(token)\"}", "{\"tokens\":\"\(token)\"}",
            "{\"nonce\":\"n\"}", "{\"id\":\"x\",\"at\":1}", "{\(t)}   ", "{\(t)}\t\r",
        ]
        for line in lines { expectSameRecord(line) }
    }

    @Test("every one-byte change of a usual record line reads the same by both paths")
    func everyByteEverywhere() {
        let line = Array("{\"id\":\"r-1\",\"at\":17,\"nonce\":\"n\",\"token\":\"eyJ.a.b\"}".utf8)
        let values: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x22, 0x2C, 0x2D, 0x2E, 0x30, 0x31, 0x3A, 0x41, 0x45, 0x5B,
                               0x5C, 0x5D, 0x65, 0x6E, 0x74, 0x7B, 0x7D, 0x7E, 0x7F, 0x80, 0xC3, 0xFF]
        for position in line.indices {
            for value in values {
                var bytes = line
                bytes[position] = value
                expectSameRecord(String(decoding: bytes, as: UTF8.self))
            }
        }
    }

    @Test("a string's end is found across the word and byte steps, and any bad byte before it refuses the string")
    func stringEnds() {
        for length in 0..<40 {
            let text = Array(repeating: UInt8(ascii: "a"), count: length) + [0x22, 0x7D]
            let end = text.withUnsafeBufferPointer { JSONRecordScanner.plainStringEnd($0.baseAddress!, from: 0, end: $0.count) }
            #expect(end == length)
            for position in 0..<length {
                for bad: UInt8 in [0x00, 0x1F, 0x5C, 0x7F, 0x80, 0xC3, 0xFF] {
                    var damaged = text
                    damaged[position] = bad
                    let found = damaged.withUnsafeBufferPointer { JSONRecordScanner.plainStringEnd($0.baseAddress!, from: 0, end: $0.count) }
                    #expect(found == nil, "byte \(bad) at \(position) of \(length)")
                }
                for good: UInt8 in [0x20, 0x21, 0x5B, 0x5D, 0x7E] {
                    var edged = text
                    edged[position] = good
                    let found = edged.withUnsafeBufferPointer { JSONRecordScanner.plainStringEnd($0.baseAddress!, from: 0, end: $0.count) }
                    #expect(found == length, "byte \(good) at \(position) of \(length)")
                }
            }
        }
    }

    @Test("the sixteen-byte plain-string run ends where the byte check says, for every byte value at every position")
    func plainRun() {
        func plain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F && byte != 0x22 && byte != 0x5C }
        expectRunEndsWhereBytesSay(fills: " a~!", belongs: plain) { base, count in
            ByteSearch.plainStringRunEnd(in: base, from: 0, to: count)
        }
    }
}
