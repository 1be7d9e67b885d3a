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
    }

    @Test func whatFollowsTheSchemeIsLeftForTheVerifierToJudge() {
        // An inner space or non-ASCII byte is not a missing token: the verifier refuses it with its own code.
        #expect(BearerToken.token(inAuthorization: "Bearer a b") == "a b")
        #expect(BearerToken.token(inAuthorization: "Bearer zoë") == "zoë")
    }
}
