@testable import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Reported claims")
struct ReportedClaimsTests {
    @Test("integer literals read from their text as the strict reader's Int64", arguments: [
        "0", "-0", "7", "-7", "1767268800", "-1767268800", "9223372036854775807", "-9223372036854775808", "100000000000000000",
    ])
    func integers(_ text: String) throws {
        let value = Array(text.utf8).withUnsafeBufferPointer { ReportedClaims.integer($0) }
        #expect(value == Int64(text))
    }

    @Test("exp and iat: text as written and value, for integers, reals and other kinds; thresholds only from valid NumericDates")
    func times() throws {
        let cases: [(json: String, exp: String?, expires: Double?, iat: String?, thresholds: [Double])] = [
            (#"{"exp":1767268800,"iat":-5}"#, "1767268800", 1_767_268_800, "-5", [1_767_268_860]),
            (#"{"exp":1767268800.25,"iat":1e3}"#, "1767268800.25", 1_767_268_800.25, "1e3", [1_767_268_860.25, 940]),
            (#"{"exp":"1767268800","iat":null}"#, nil, nil, nil, []),
            (#"{"exp":-9223372036854775808,"nbf":5,"auth_time":1.5e1}"#, "-9223372036854775808", -9_223_372_036_854_775_808, nil, [-55, -45]),
            (#"{"sub":"x"}"#, nil, nil, nil, []),
        ]
        for c in cases {
            let claims = try JSONObject.parse(c.json)
            let reported = ReportedClaims(header: nil, claims: claims)
            #expect(reported.expiresText == c.exp, "\(c.json)")
            #expect(reported.expires == c.expires, "\(c.json)")
            #expect(reported.issuedAtText == c.iat, "\(c.json)")
            // A claim the verifier refuses whatever the time (a string, a negative date) moves no threshold.
            let judgement = ProfileVerification(error: nil, signatureVerified: true, header: nil, claims: claims, leeway: 60, profile: nil)
            #expect(judgement.timeThresholds == c.thresholds, "\(c.json)")
        }
    }

    @Test("a number's literal is kept and written byte for byte, in place up to 24 bytes and as a string beyond", arguments: [
        "1767268800", "0", "-0", "-7", "-9223372036854775808", "9223372036854775807", "1.5e9", "0.25", "-1E-2",
        "1767268800.0", "1767268800.123456789012345", "123456789012345678901.5", "1.2345678901234567890123", "-1.2345678901234567890123",
    ])
    func numbersKeptAndWritten(_ literal: String) throws {
        let claims = try JSONObject.parse(#"{"exp":\#(literal),"iat":\#(literal)}"#)
        let reported = ReportedClaims(header: nil, claims: claims)
        for number in [reported.expiresNumber, reported.issuedAtNumber] {
            #expect(number?.text == literal)
            #expect(number?.withBytes { Array($0) } == Array(literal.utf8))
        }
        // Equal literals are equal and hash alike however they are held; different ones differ.
        let same = try ReportedClaims(header: nil, claims: JSONObject.parse(#"{"exp":\#(literal)}"#))
        #expect(same.expiresNumber == reported.expiresNumber)
        #expect(same.expiresNumber?.hashValue == reported.expiresNumber?.hashValue)
        let other = try ReportedClaims(header: nil, claims: JSONObject.parse(#"{"exp":42}"#))
        #expect(other.expiresNumber != reported.expiresNumber)
        // The NDJSON line carries the literal byte for byte, as the audit's golden outputs require.
        var line: [UInt8] = []
        RecordRendering.ndjson(AuditResult(line: 1, id: nil, error: nil, claims: reported, at: 0, signatureVerified: true, profile: nil),
                               into: &line)
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.contains(#","exp":\#(literal),"iat":\#(literal),"at":0,"#), "\(text)")
    }

    /// The fields are read in one walk over the members, by name; each must be what a look-up of its name finds
    /// (names and values written with escapes, values of other kinds, names that only start like a reported one).
    @Test("one walk reads the same fields as a look-up of each name", arguments: [
        #"{"iss":"https://issuer.example","sub":"user-1","aud":"app","exp":1767268800,"iat":1767265200}"#,
        #"{"\u0069ss":"https:\/\/issuer.example","s\u0075b":"caf\u00e9 \"quoted\"","aud":"a\tb","exp":1.5e9,"iat":-0}"#,
        #"{"isss":"x","su":"y","aud":["one","t\u0077o",3,"three"],"exp":"1767268800","iat":true,"sub":7}"#,
        #"{"iss":null,"sub":"","aud":{"a":1},"exp":-9223372036854775808,"iat":1e3,"ia":"no"}"#,
        #"{"nested":{"iss":"inner","sub":"inner"},"exp":0.25}"#,
        "{}",
    ])
    func oneWalkEqualsLookUps(_ json: String) throws {
        let claims = try JSONObject.parse(json)
        let reported = ReportedClaims(header: nil, claims: claims)
        #expect(reported.issuer == claims["iss"]?.string)
        #expect(reported.subject == claims["sub"]?.string)
        let aud = claims["aud"]
        let audience: ReportedClaims.Audience? = aud?.string.map { .single($0) }
            ?? aud?.array.map { .list($0.compactMap(\.string)) }
        #expect(reported.audience == audience)
        for (name, text) in [("exp", reported.expiresText), ("iat", reported.issuedAtText)] {
            let value = claims[name]
            let number = value.flatMap { $0.kind == .integer || $0.kind == .real ? $0.rawJSON : nil }
            #expect(text == number, "\(name) in \(json)")
        }
        switch claims.number(JSONKey("exp")) {
        case .integer(let value): #expect(reported.expires == Double(value))
        case .real(let value): #expect(reported.expires == value)
        case .missing, .notANumber: #expect(reported.expires == nil)
        }
    }

    /// `forEachMember(decodingStrings:)` lends each string as `withString` does, and everything else as written.
    @Test("a walk decoding strings lends the bytes a look-up lends")
    func walkDecodingStrings() throws {
        let claims = try JSONObject.parse(#"{"a":"pl\u0061in","\u0062":"\ud83d\ude00","c":[1, 2],"d":12.5,"e":"x"}"#)
        var seen: [String: [UInt8]] = [:]
        claims.forEachMember(decodingStrings: true) { name, kind, value in
            seen[String(decoding: name, as: UTF8.self)] = Array(value)
        }
        #expect(seen.keys.sorted() == ["a", "b", "c", "d", "e"])
        for name in ["a", "b", "e"] {
            #expect(seen[name] == claims.withString(JSONKey(name)) { Array($0) }, "\(name)")
        }
        #expect(seen["c"] == Array("[1, 2]".utf8))
        #expect(seen["d"] == Array("12.5".utf8))
    }
}
