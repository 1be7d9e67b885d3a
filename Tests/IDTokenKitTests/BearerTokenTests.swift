import IDTokenKit
import Testing

/// The token of an `Authorization` header, read byte-wise (RFC 6750 §2.1).
@Suite struct BearerTokenTests {
    @Test func theSchemeIsCaseInsensitiveAndSpacesAroundTheTokenGo() {
        #expect(BearerToken.token(inAuthorization: "Bearer abc.def.ghi") == "abc.def.ghi")
        #expect(BearerToken.token(inAuthorization: "bearer abc") == "abc")
        #expect(BearerToken.token(inAuthorization: "BEARER   abc  ") == "abc")
        #expect(BearerToken.token(inAuthorization: "bEaReR x") == "x")
    }

    @Test func anotherSchemeOrNoTokenIsNoBearerToken() {
        #expect(BearerToken.token(inAuthorization: "Basic dXNlcjpwYXNz") == nil)
        #expect(BearerToken.token(inAuthorization: "Bearer") == nil)
        #expect(BearerToken.token(inAuthorization: "Bearer    ") == nil)
        #expect(BearerToken.token(inAuthorization: "Bearerabc") == nil)
        #expect(BearerToken.token(inAuthorization: "") == nil)
        #expect(BearerToken.token(inAuthorization: "Béarer abc") == nil)
        // Only a space separates the scheme: a NUL or a tab there (each equals a space with bit 5 set, as the
        // scheme's letters are compared) is not one.
        #expect(BearerToken.token(inAuthorization: "Bearer\u{0}abc") == nil)
        #expect(BearerToken.token(inAuthorization: "Bearer\u{0}\u{0}") == nil)
    }

    @Test func whitespaceInsideIsNoBearerCredential() {
        // A b64token has no whitespace (RFC 6750 §2.1): such a value is a missing token, not a malformed one.
        #expect(BearerToken.token(inAuthorization: "Bearer a b") == nil)
        #expect(BearerToken.token(inAuthorization: "Bearer a\tb") == nil)
        #expect(BearerToken.token(inAuthorization: "Bearer a\u{00A0}b") == nil)
        #expect(BearerToken.token(inAuthorization: "Bearer a\u{2028}b") == nil)
    }

    @Test func otherTextIsLeftForTheVerifierToJudge() {
        #expect(BearerToken.token(inAuthorization: "Bearer zoë") == "zoë")
        #expect(BearerToken.token(inAuthorization: "Bearer a,b;c") == "a,b;c")
    }

    /// The rule read one character at a time, as RFC 6750 §2.1 states it: the reference the byte-wise reader (which
    /// checks eight bytes at a time) must agree with.
    static func reference(_ value: String) -> String? {
        guard value.count > 7, value.prefix(6).lowercased() == "bearer", value.unicodeScalars.dropFirst(6).first == " "
        else { return nil }
        let token = value.unicodeScalars.dropFirst(7).drop(while: { $0 == " " })
        let trimmed = String(String.UnicodeScalarView(token)).reversed().drop(while: { $0 == " " }).reversed()
        let text = String(trimmed)
        guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || (0x09...0x0D).contains($0.value) })
        else { return nil }
        return text
    }

    @Test func everyByteAtEveryPlaceOfAWordAgreesWithTheRule() {
        // Every ASCII byte and a few non-ASCII characters, at each of the first seventeen places and the last
        // few of a token long enough to be read in words (and at its tail, read byte by byte).
        let base = String(repeating: "eyJhbGciOi.", count: 4)
        var checked = 0
        for scalar in (0...0x7F).map({ Unicode.Scalar($0)! }) + ["\u{A0}", "é", "\u{2028}", "\u{3000}"] {
            for place in Array(0...17) + Array((base.count - 3)...base.count) {
                var chars = Array(base.unicodeScalars)
                chars.insert(scalar, at: place)
                let value = "Bearer " + String(String.UnicodeScalarView(chars))
                #expect(BearerToken.token(inAuthorization: value) == Self.reference(value), "\(scalar.value) at \(place)")
                checked += 1
            }
        }
        #expect(checked == 132 * 22)
    }
}
