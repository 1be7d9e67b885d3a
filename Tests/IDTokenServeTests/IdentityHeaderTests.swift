import Foundation
import IDTokenServe
import Testing

/// Claim text is hostile: what the identity headers carry, byte for byte.
@Suite(.serialized) struct IdentityHeaderTests {
    @Test func encodingRule() {
        #expect(IdentityHeaders.encode("user-1@example.com") == "user-1@example.com")
        #expect(IdentityHeaders.encode("a\r\nX-Evil: 1") == "a%0D%0AX-Evil: 1")
        #expect(IdentityHeaders.encode("nul\u{0}tab\tdel\u{7F}") == "nul%00tab%09del%7F")
        #expect(IdentityHeaders.encode("Zoë") == "Zo%C3%AB")
        #expect(IdentityHeaders.encode("100%,x") == "100%25%2Cx")
        #expect(IdentityHeaders.encode("\u{1F600}") == "%F0%9F%98%80")
        #expect(IdentityHeaders.encodeList(["a,b", "c"]) == "a%2Cb,c")
        for text in ["a\r\nb", "\u{0}", "é", "\u{2028}", "\u{85}"] { #expect(IdentityHeaders.isSafe(IdentityHeaders.encode(text))) }
        // Decoding %XX then UTF-8 gives the claim back.
        let original = "Zoë \r\n 100% ,\u{0}"
        #expect(IdentityHeaders.encode(original).removingPercentEncoding == original)
    }

    @Test func hostileClaimsNeverWriteAHeader() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        let email = "zo\\u00eb\\r\\nX-Evil: 1\\u0001\\t\\u007f\\u2028@example.com"
        let token = ServeFixture.firebaseToken(sub: "Zo\\u00eb\\r\\nSet-Cookie: a=b", extra: ",\"email\":\"\(email)\",\"email_verified\":true")
        let response = try await fixture.verify(token)
        #expect(response.status == 200, "\(response.header("X-Auth-Error") ?? "")")
        #expect(response.header("X-Evil") == nil)
        #expect(response.header("Set-Cookie") == nil)
        #expect(response.header("X-Auth-Subject") == "Zo%C3%AB%0D%0ASet-Cookie: a=b")
        #expect(response.header("X-Auth-Email") == "zo%C3%AB%0D%0AX-Evil: 1%01%09%7F%E2%80%A8@example.com")
        for (_, value) in response.headers { #expect(IdentityHeaders.isSafe(value)) }
        // NUL never gets this far: the JSON reader refuses `\u0000` in a token (malformed).
        let nul = try await fixture.verify(ServeFixture.firebaseToken(sub: "a\\u0000b"))
        #expect(nul.header("X-Auth-Error") == "malformed")
    }

    /// The headers are encoded from the claims' bytes: `email_verified` as a boolean or the strings "true" and
    /// "false" (escaped or not), an email that is not a string left out, `exp` as the integer of its seconds.
    @Test func claimsReadInPlace() async throws {
        let fixture = try await ServeFixture()
        defer { Task { await fixture.stop() } }
        for (verified, sent) in [("true", true), ("\"true\"", true), ("\"\\u0074rue\"", true), ("\"false\"", false),
                                 ("false", false), ("1", false), ("\"yes\"", false)] {
            let response = try await fixture.verify(ServeFixture.firebaseToken(extra: ",\"email\":\"a@b.test\",\"email_verified\":\(verified)"))
            #expect(response.status == 200, "\(verified)")
            #expect(response.header("X-Auth-Email") == (sent ? "a@b.test" : nil), "\(verified)")
        }
        let number = try await fixture.verify(ServeFixture.firebaseToken(extra: ",\"email\":7,\"email_verified\":true"))
        #expect(number.status == 200)
        #expect(number.header("X-Auth-Email") == nil)
        let escaped = try await fixture.verify(ServeFixture.firebaseToken(sub: "a\\u002Cb", exp: ServeFixture.now + 1234.75))
        #expect(escaped.header("X-Auth-Subject") == "a%2Cb")
        #expect(escaped.header("X-Auth-Expires") == String(Int64(ServeFixture.now) + 1234))
    }

    @Test func overlongIdentifiersRefuseRatherThanCut() async throws {
        let fixture = try await ServeFixture(serve: "{\"maxIdentityHeaderBytes\": 100}")
        defer { Task { await fixture.stop() } }
        // 40 "é" encode to 240 bytes: over the limit, so the request is refused, the claim named.
        let long = String(repeating: "\\u00e9", count: 40)
        let response = try await fixture.verify(ServeFixture.firebaseToken(extra: ",\"email\":\"\(long)@x.test\",\"email_verified\":true"))
        #expect(response.status == 401)
        #expect(response.header("X-Auth-Error") == "invalid_claim")
        #expect(fixture.log.entries.contains { $0.metadata["claim"] == "email" })
        // Just under the limit passes whole.
        let fits = String(repeating: "a", count: 90)
        #expect(try await fixture.verify(ServeFixture.firebaseToken(extra: ",\"email\":\"\(fits)@x.test\",\"email_verified\":true")).header("X-Auth-Email") == fits + "@x.test")
    }

    @Test func largePayloadLeavesOutTheClaimsHeader() async throws {
        let fixture = try await ServeFixture(serve: "{\"maxClaimsHeaderBytes\": 300}")
        defer { Task { await fixture.stop() } }
        let big = try await fixture.verify(ServeFixture.firebaseToken(extra: ",\"pad\":\"\(String(repeating: "x", count: 400))\""))
        #expect(big.status == 200)
        #expect(big.header("X-Auth-Claims") == nil)
        #expect(big.header("X-Auth-Claims-Omitted") == "too-large")
        #expect(big.header("X-Auth-Subject") == "user-1")
        let small = try await fixture.verify(ServeFixture.firebaseToken())
        #expect(small.header("X-Auth-Claims") != nil)
    }
}
