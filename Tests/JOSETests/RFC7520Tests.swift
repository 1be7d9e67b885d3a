import IDTokenKit
import JOSE
import TestSupport
import Testing

/// RFC 7520 (the JOSE cookbook), §3 keys and §4 signatures, from the ietf-jose/cookbook files.
///
/// §4.1 (RS256) verifies with the §3.3 key; §4.2 is PS384 and verifies with the same modulus bound to PS384;
/// §4.3 is ES512 over P-521, which this library does not implement: its key is refused at load with a reason
/// and the token is refused for its algorithm. The HMAC examples (§4.4, §4.5) are refused for theirs.
@Suite struct RFC7520Tests {
    static func file(_ name: String) throws -> JSONTree { try VectorFiles.json("external/rfc7520-cookbook/\(name)") }
    static func compact(_ name: String) throws -> String { try file("jws/\(name)")["output"]!["compact"]!.string! }

    static let kid = "bilbo.baggins@hobbiton.example"

    @Test func section4_1RS256Verifies() throws {
        let keys = try JWKSet.parse(Self.file("jwk/3_3.rsa_public_key.json").jsonText)
        #expect(keys.kids == [Self.kid])
        #expect(keys.keys[0].algorithm == .rs256)
        let token = try Self.compact("4_1.rsa_v15_signature.json")
        #expect(Outcome.ofSignature(token, keys: keys, allowed: [.rs256]) == .accepted)
        // The normalised copy of the same case agrees.
        let extract = try Self.file("rfc7520_sig_extract.json").array!.first { $0["id"]?.string == "rfc7520-4.1" }
        #expect(extract?["token"]?.string == token)
        // The payload is text, not a JSON object: the signature verifies, the claims step refuses it.
        #expect(Outcome.ofVerification(token, keys: keys, allowed: [.rs256]) == .rejected(.malformed))
    }

    @Test func section4_2PS384VerifiesWithAPS384Key() throws {
        let jwk = try Self.file("jwk/3_3.rsa_public_key.json")
        let token = try Self.compact("4_2.rsa-pss_signature.json")
        let ps384 = try PublicKey(rsaModulus: Base64URL.decode(jwk["n"]!.string!)!, exponent: Base64URL.decode(jwk["e"]!.string!)!,
                                  algorithm: .ps384, kid: Self.kid)
        #expect(Outcome.ofSignature(token, keys: JWKSet(keys: [ps384]), allowed: [.ps384]) == .accepted)
        // The same JWK without "alg" is bound to RS256, so a PS384 header does not fit it, even when the policy
        // allows PS384: the key decides the algorithm, not the token.
        let rs256 = try JWKSet.parse(jwk.jsonText)
        #expect(Outcome.ofSignature(token, keys: rs256, allowed: [.ps384, .rs256]) == .rejected(.algorithmNotAllowed))
        // A PS256-bound key (the Wycheproof copy of this case) does not verify PS384 either.
        let ps256 = try PublicKey(rsaModulus: Base64URL.decode(jwk["n"]!.string!)!, exponent: Base64URL.decode(jwk["e"]!.string!)!,
                                  algorithm: .ps256, kid: Self.kid)
        #expect(Outcome.ofSignature(token, keys: JWKSet(keys: [ps256]), allowed: [.ps384, .ps256]) == .rejected(.algorithmNotAllowed))
        #expect(try !CompactJWS(token).verifySignature(with: ps256))
    }

    @Test func section4_3ES512IsNotSupported() throws {
        let keys = try JWKSet.parse(Self.file("jwk/3_1.ec_public_key.json").jsonText)
        #expect(keys.isEmpty)
        #expect(keys.rejected.count == 1)
        #expect(keys.rejected.first?.kid == Self.kid)
        #expect(keys.rejected.first?.reason.contains("unsupported curve \"P-521\"") == true)
        let token = try Self.compact("4_3.ecdsa_signature.json")
        #expect(Outcome.ofSignature(token, keys: keys, allowed: Set(JWSAlgorithm.allCases)) == .rejected(.algorithmNotAllowed))
    }

    @Test func hmacExamplesAreRefused() throws {
        for name in ["4_4.hmac-sha2_integrity_protection.json", "4_5.signature_with_detached_content.json"] {
            let token = try Self.compact(name)
            #expect(Outcome.ofSignature(token, keys: .empty, allowed: Set(JWSAlgorithm.allCases)) == .rejected(.algorithmNotAllowed), "\(name)")
        }
    }

    /// §3: only the RSA public key is usable; private keys, a P-521 key and symmetric keys are refused with reasons.
    @Test func section3Keys() throws {
        let expected: [(String, String?)] = [
            ("3_1.ec_public_key.json", "unsupported curve \"P-521\""),
            ("3_2.ec_private_key.json", "private or symmetric key material"),
            ("3_3.rsa_public_key.json", nil),
            ("3_4.rsa_private_key.json", "private or symmetric key material"),
            ("3_5.symmetric_key_mac_computation.json", "symmetric keys are never used"),
            ("3_6.symmetric_key_encryption.json", "symmetric keys are never used"),
        ]
        for (name, refusal) in expected {
            let keys = try JWKSet.parse(Self.file("jwk/\(name)").jsonText)
            if let refusal {
                #expect(keys.isEmpty, "\(name)")
                #expect(keys.rejected.count == 1 && keys.rejected[0].reason.contains(refusal), "\(name): \(keys.rejected)")
            } else {
                #expect(keys.keys.count == 1 && keys.rejected.isEmpty, "\(name): \(keys.rejected)")
            }
        }
    }

    /// §4.6–4.8 exist only in the JSON serialization (unprotected headers, several signatures), which is not
    /// supported; their compact form is absent from the cookbook, and the JSON text is not a compact JWS.
    @Test func jsonSerializationOnlyExamples() throws {
        for name in ["4_6.protecting_specific_header_fields.json", "4_7.protecting_content_only.json", "4_8.multiple_signatures.json"] {
            let example = try Self.file("jws/\(name)")
            #expect(example["output"]?["compact"]?.string == nil, "\(name)")
            let json = try #require(example["output"]?["json"]?.jsonText)
            #expect(Outcome.ofSignature(json, keys: .empty, allowed: Set(JWSAlgorithm.allCases)) == .rejected(.malformed), "\(name)")
        }
    }
}
