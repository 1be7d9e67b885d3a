import Foundation
import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Output formats")
struct OutputFormatTests {
    /// RFC 4180 reader for the test: quoted fields, doubled quotes, CRLF records.
    func parseCSV(_ text: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = ""
        var quoted = false
        var chars = Array(text)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { quoted = false }
                } else { field.append(c) }
            } else if c == "\"" { quoted = true }
            else if c == "," { row.append(field); field = "" }
            else if c == "\r\n" || c == "\n" { row.append(field); rows.append(row); row = []; field = "" }
            else { field.append(c) }
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }

    @Test("CSV quotes commas, quotes and line breaks as RFC 4180 says, and reads back to the same fields")
    func csvQuoting() throws {
        let (token, claims) = try #require(try Sample.validTokens()["firebase"])
        let at = Double(try #require(claims["iat"] as? Int)) + 1
        let awkward = "a,b \"quoted\"\nsecond line\r\nthird"
        let log = [record(token, at: at, id: awkward), record("not-a-token", at: at, id: "plain"), "{\"token\":\"x.y.z\",\"id\":12.5}"]
            .joined(separator: "\n")
        let run = try AuditRun(Array(log.utf8), verifier: try Sample.verifier(), format: .csv)
        #expect(run.output.hasPrefix("line,id,valid,error,iss,sub,aud,kid,exp,iat,at,message\r\n"))
        #expect(run.output.contains("\"a,b \"\"quoted\"\"\nsecond line\r\nthird\""))
        let rows = parseCSV(run.output)
        #expect(rows.count == 4)
        #expect(rows.allSatisfy { $0.count == OutputFormat.fields.count })
        #expect(rows[1][0] == "1")
        #expect(rows[1][1] == awkward)
        #expect(rows[1][2] == "true")
        #expect(rows[1][3] == "")
        #expect(rows[1][4] == "https://securetoken.google.com/idtokenkit-sample")
        #expect(rows[2][1] == "plain")
        #expect(rows[2][3] == "malformed")
        #expect(rows[3][1] == "12.5")
        let message = try #require(run.results[1].error?.message)
        #expect(rows[2][11] == message)
    }

    @Test("a record's at is written in whole seconds, in NDJSON and CSV, and so is the time in messages")
    func wholeSeconds() throws {
        let (token, claims) = try #require(try Sample.validTokens()["apple"])
        let exp = Double(try #require(claims["exp"] as? Int))
        let log = "{\"token\":\"\(token)\",\"at\":\"\(UnixTime.iso8601(exp + 3600).dropLast()).794Z\"}\n{\"token\":\"\(token)\",\"at\":\(Int(exp) + 3600).5}"
        for format in [OutputFormat.ndjson, .csv] {
            let run = try AuditRun(Array(log.utf8), verifier: try Sample.verifier(), format: format)
            #expect(run.results.count == 2)
            #expect(run.results.allSatisfy { $0.error?.code == .expired }, "\(run.output)")
            #expect(!run.output.contains(".794") && !run.output.contains("00.5"), "\(run.output)")
            #expect(run.output.contains(format == .csv ? ",\(Int(exp) + 3600)," : "\"at\":\(Int(exp) + 3600),"))
            #expect(run.results.allSatisfy { $0.error?.message.contains("\(Int(exp) + 3600) (") == true })
        }
    }

    @Test("NDJSON: one JSON object a line with the DESIGN fields first, in order")
    func ndjson() throws {
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier())
        let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == run.results.count)
        for (line, result) in zip(lines, run.results) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["line"] as? Int == result.line)
            #expect(object["valid"] as? Bool == result.isValid)
            #expect((object["error"] as? String) == result.error?.code.rawValue)
            #expect((object["iss"] as? String) == result.claims.issuer)
            #expect((object["kid"] as? String) == result.claims.kid)
            #expect(line.hasPrefix("{\"line\":\(result.line),\"id\":"))
            let order = ["\"line\":", "\"id\":", "\"valid\":", "\"error\":", "\"iss\":", "\"sub\":", "\"aud\":", "\"kid\":", "\"exp\":", "\"iat\":", "\"at\":", "\"message\":"]
            let positions = order.compactMap { line.range(of: $0)?.lowerBound }
            #expect(positions.count == order.count)
            #expect(positions == positions.sorted())
        }
    }

    @Test("the summary JSON parses and carries the counts")
    func summaryJSON() throws {
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier(), replay: MemoryReplayDetector())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.summary.json().utf8)) as? [String: Any])
        #expect(object["records"] as? Int == run.summary.records)
        #expect(object["valid"] as? Int == run.summary.valid)
        #expect(object["byError"] as? [String: Int] == run.summary.byError)
        #expect((object["replays"] as? [String: Any])?["count"] as? Int == run.summary.replays)
        #expect((object["usedAfterExpiry"] as? [String: Any])?["count"] as? Int == run.summary.usedAfterExpiry)
        let keys = try #require(object["keys"] as? [String: [String: Any]])
        #expect(Set(keys.keys) == Set(run.summary.keyUsage.keys))
        #expect(object["tokensPerSecond"] is NSNumber)
    }
}
