import Foundation
import IDTokenAudit
import IDTokenKit
import TestSupport
import Testing

/// An audit routes each token to a profile by its `iss` (read once, and the same reading checked once the signature
/// verifies); whatever the route, a record's signature is verified at most once, and not at all when no profile
/// accepts its issuer. Counted with libcrypto's verifications on the judging thread.
@Suite("Signature verifications per record")
struct SignatureCountTests {
    static let a = TestSigner(.es256, kid: "key-a")
    static let b = TestSigner(.es256, kid: "key-b")
    /// One key published by both issuers, under one `kid`: its tokens are routed by `iss` alone.
    static let shared = TestSigner(.es256, kid: "key-shared")

    static func verifier() throws -> MultiProfileVerifier {
        func profile(_ name: String) -> Profile {
            Profile.oidc(issuers: ["https://\(name).example"], audiences: ["aud-\(name)"], algorithms: [.es256])
        }
        return try MultiProfileVerifier([
            .init(name: "a", verifier: try IDTokenVerifier(profile: profile("a"), keys: JWKSet(keys: [a.publicKey, shared.publicKey]))),
            .init(name: "b", verifier: try IDTokenVerifier(profile: profile("b"), keys: JWKSet(keys: [b.publicKey, shared.publicKey]))),
        ])
    }

    static func payload(_ issuer: String, aud: String, exp: Int = 1_767_272_400) -> String {
        #"{"iss":"https://\#(issuer).example","aud":"aud-\#(aud)","sub":"u","iat":1767268800,"exp":\#(exp)}"#
    }

    @Test("each record costs at most one signature verification, whatever the routing")
    func atMostOnce() throws {
        let verifier = try Self.verifier()
        let at: Double = 1_767_270_000
        let forged: String = {
            // Signed by b's key, but naming a's: one verification, which fails.
            let header = #"{"alg":"ES256","kid":"key-a"}"#
            let signed = Self.b.token(header: header, payload: Self.payload("a", aud: "a"))
            return signed
        }()
        let cases: [(what: String, token: String, error: TokenError.Code?, checks: Int)] = [
            ("a's key, a's token", Self.a.token(payload: Self.payload("a", aud: "a")), nil, 1),
            ("a's key, b's issuer: routed to b, which does not hold the key",
             Self.a.token(payload: Self.payload("b", aud: "b")), .unknownKey, 0),
            ("the shared key, b's token: routed by iss", Self.shared.token(payload: Self.payload("b", aud: "b")), nil, 1),
            ("the shared key, an issuer no profile accepts", Self.shared.token(payload: Self.payload("c", aud: "c")), .wrongIssuer, 0),
            ("a's key, expired", Self.a.token(payload: Self.payload("a", aud: "a", exp: 1_767_268_900)), .expired, 1),
            ("a's key, another audience", Self.a.token(payload: Self.payload("a", aud: "b")), .wrongAudience, 1),
            ("a's key, an issuer no profile accepts", Self.a.token(payload: Self.payload("c", aud: "a")), .wrongIssuer, 0),
            ("a forged signature", forged, .badSignature, 1),
            ("not a token", "eyJhbGciOiJFUzI1NiJ9.e30", .malformed, 0),
        ]
        for c in cases {
            let before = PublicKey.signatureChecksOnThisThread
            let judgement = verifier.evaluate(c.token, at: at, nonce: nil)
            let checks = PublicKey.signatureChecksOnThisThread - before
            #expect(judgement.error?.code == c.error, "\(c.what): \(String(describing: judgement.error))")
            #expect(checks == c.checks, "\(c.what): \(checks) signature verifications")
            // Reported as the audit reports it: the header (kid) without splitting the token again.
            if c.error != .malformed { #expect(judgement.header?["kid"] != nil, "\(c.what)") }
        }
    }
}
