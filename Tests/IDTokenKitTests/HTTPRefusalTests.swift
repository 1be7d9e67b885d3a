import IDTokenKit
import Testing

/// The one classification of refusals that `idtoken serve` and the framework integrations answer with.
@Suite struct HTTPRefusalTests {
    @Test func policyCodesAre403AndKeysUnavailableIs503() {
        for code in TokenError.Code.allCases {
            let refusal = HTTPRefusal(code)
            switch code {
            case .tenantMismatch, .providerNotAllowed, .revoked:
                #expect(refusal == .forbidden(code) && refusal.status == 403 && refusal.bearerError == "insufficient_scope")
            case .keysUnavailable, .replayStoreUnavailable:
                // The token was not judged: no challenge, and a client told 503 tries again.
                #expect(refusal == .unavailable(code) && refusal.status == 503 && refusal.wwwAuthenticate() == nil)
            default:
                #expect(refusal == .invalidToken(code) && refusal.status == 401 && refusal.bearerError == "invalid_token")
            }
            #expect(refusal.code == code)
            #expect(TokenError(code, "message").httpRefusal == refusal)
        }
    }

    @Test func challengesFollowRFC6750() {
        #expect(HTTPRefusal.missingToken.wwwAuthenticate() == "Bearer")
        #expect(HTTPRefusal.missingToken.status == 401 && HTTPRefusal.missingToken.code == nil)
        #expect(HTTPRefusal.missingToken.wwwAuthenticate(realm: "api") == #"Bearer realm="api""#)
        #expect(HTTPRefusal(.expired).wwwAuthenticate()
            == #"Bearer error="invalid_token", error_description="expired""#)
        #expect(HTTPRefusal(.revoked).wwwAuthenticate(realm: #"my "api"\"#)
            == #"Bearer realm="my \"api\"\\", error="insufficient_scope", error_description="revoked""#)
        #expect(HTTPRefusal.missingToken.wwwAuthenticate(realm: "a\r\nSet-Cookie: x") == #"Bearer realm="aSet-Cookie: x""#)
    }
}
