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
}
