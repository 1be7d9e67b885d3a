import IDTokenKit
import JOSE
import TestSupport
import Testing

/// RFC 7515 Appendix A.2 (RS256) and A.3 (ES256): the examples verify, over the received bytes, with keys
/// that have no `kid` (a one-key set and `requireKid: false`), and any change to them is refused.
@Suite struct RFC7515Tests {
    struct Example: Sendable, CustomStringConvertible {
        let id: String
        let algorithm: JWSAlgorithm
        let token: String
        let signingInput: String
        let publicJWK: String
        var description: String { id }
    }

    static let examples: [Example] = {
        let tree = try! VectorFiles.json("external/rfc7515/rfc7515_appendix_a2_a3.json")
        return tree.array!.map { c in
            Example(id: c["id"]!.string!, algorithm: JWSAlgorithm(rawValue: c["alg"]!.string!)!, token: c["token"]!.string!,
                    signingInput: c["signing_input"]!.string!, publicJWK: c["jwk_public"]!.jsonText)
        }
    }()

    @Test func bothExamplesArePresent() {
        #expect(Self.examples.map(\.id) == ["rfc7515-A.2", "rfc7515-A.3"])
        #expect(Self.examples.map(\.algorithm) == [.rs256, .es256])
    }

    @Test(arguments: examples)
    func verifies(_ example: Example) throws {
        let keys = try JWKSet.parse(example.publicJWK)
        #expect(keys.rejected.isEmpty, "\(keys.rejected)")
        #expect(keys.keys.map(\.algorithm) == [example.algorithm])
        let (jws, claims) = try CompactJWS.verify(example.token, keys: keys, allowed: [example.algorithm], requireKid: false)
        #expect(jws.signingInput == Substring(example.signingInput))
        #expect(jws.header.algorithm == example.algorithm)
        // The payload keeps the RFC's CRLF line breaks; the claims are read from it as sent.
        #expect(claims["iss"]?.stringEquals("joe") == true)
        #expect(claims["exp"]?.int64 == 1_300_819_380)
        #expect(claims["http://example.com/is_root"]?.bool == true)
    }

    @Test(arguments: examples)
    func changesAreRefused(_ example: Example) throws {
        let keys = try JWKSet.parse(example.publicJWK)
        let parts = example.token.split(separator: ".").map(String.init)
        // One signature character changed (keeping the last one, whose unused bits must stay zero).
        var signature = Array(parts[2].utf8)
        signature[10] = signature[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let cases: [(String, String, Outcome)] = [
            ("signature changed", parts[0] + "." + parts[1] + "." + String(decoding: signature, as: UTF8.self), .rejected(.badSignature)),
            ("payload replaced", parts[0] + "." + Base64URL.encode(Array("{\"iss\":\"joe\"}".utf8)) + "." + parts[2], .rejected(.badSignature)),
            ("signature of the other example", parts[0] + "." + parts[1] + "."
                + Self.examples.first { $0.id != example.id }!.token.split(separator: ".")[2], .rejected(.badSignature)),
            ("algorithm not in the policy", example.token, .rejected(.algorithmNotAllowed)),
            ("kid required but absent", example.token, .rejected(.unknownKey)),
        ]
        for (name, token, want) in cases {
            let allowed: Set<JWSAlgorithm> = name == "algorithm not in the policy" ? [example.algorithm == .rs256 ? .es256 : .rs256]
                                                                                  : [example.algorithm]
            let outcome = Outcome.ofVerification(token, keys: keys, allowed: allowed, requireKid: name == "kid required but absent")
            #expect(outcome == want, "\(example.id): \(name)")
        }
    }
}
