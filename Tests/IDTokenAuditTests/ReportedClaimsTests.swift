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
}
