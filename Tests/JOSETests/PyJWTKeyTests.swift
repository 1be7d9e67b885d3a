import JOSE
import TestSupport
import Testing

/// pyjwt's JWK fixtures through ``JWKSet/parse(_:)``: which keys are kept, bound to which algorithm, and why the
/// others are refused.
@Suite struct PyJWTKeyTests {
    struct Case: Sendable, CustomStringConvertible {
        let file: String
        /// (kid or "", algorithm) of the keys kept
        let kept: [(String, JWSAlgorithm)]
        /// fragments of the refusal reasons, in order
        let refused: [String]
        let why: String
        var description: String { file }
    }

    static let cases: [Case] = [
        Case(file: "jwk_rsa_pub.json", kept: [("bilbo.baggins@hobbiton.example", .rs256)], refused: [],
             why: "an RSA signing key without alg is bound to RS256, the one RSA algorithm every provider uses"),
        Case(file: "jwk_ec_pub_P-256.json", kept: [("bilbo.baggins.256@hobbiton.example", .es256)], refused: [],
             why: "a P-256 key is bound to ES256 by its curve"),
        Case(file: "jwk_ec_pub_P-384.json", kept: [("bilbo.baggins.384@hobbiton.example", .es384)], refused: [],
             why: "a P-384 key is bound to ES384 by its curve"),
        Case(file: "jwk_ec_pub_P-521.json", kept: [], refused: ["unsupported curve \"P-521\""],
             why: "P-521 (ES512) is not implemented: no ID token provider signs with it"),
        Case(file: "jwk_ec_pub_secp256k1.json", kept: [], refused: ["unsupported curve \"secp256k1\""],
             why: "secp256k1 (ES256K) is not a curve any ID token provider uses"),
        Case(file: "jwk_okp_pub_Ed25519.json", kept: [], refused: ["unsupported \"kty\" \"OKP\""],
             why: "EdDSA / Ed25519 is not implemented"),
        Case(file: "jwk_hmac.json", kept: [], refused: ["symmetric keys are never used"],
             why: "a shared secret can never verify a token signed with a public key"),
        Case(file: "jwk_keyset_with_unknown_alg.json", kept: [("U1MayerhVuRj8xtFR8hyMH9lCfVMKlb3TG7mbQAS19M", .rs256)],
             refused: ["\"use\" is \"enc\""],
             why: "as in pyjwt: one usable RS256 key; the RSA-OAEP encryption key is refused without sinking the set"),
        Case(file: "jwk_keyset_only_unknown_alg.json", kept: [], refused: ["\"use\" is \"enc\""],
             why: "pyjwt raises for a set with no usable key; here the set parses, is empty and lists the refusal, "
                 + "so every token against it is unknown_key and a key source can report why"),
    ]

    @Test(arguments: cases)
    func fixture(_ c: Case) throws {
        let set = try JWKSet.parse(VectorFiles.bytes("external/pyjwt/\(c.file)"))
        #expect(set.keys.map { $0.kid ?? "" } == c.kept.map(\.0), "\(c.file): \(c.why)")
        #expect(set.keys.map(\.algorithm) == c.kept.map(\.1), "\(c.file): \(c.why)")
        #expect(set.rejected.count == c.refused.count, "\(c.file): \(set.rejected)")
        for (rejected, fragment) in zip(set.rejected, c.refused) {
            #expect(rejected.reason.contains(fragment), "\(c.file): \(rejected) — \(c.why)")
        }
    }

    /// The empty file is not a key set at all: the whole document is refused, with a reason.
    @Test func emptyFile() throws {
        let bytes = try VectorFiles.bytes("external/pyjwt/jwk_empty.json")
        #expect(bytes.isEmpty)
        #expect(throws: JWKSet.FormatError.self) { try JWKSet.parse(bytes) }
    }

    /// pyjwt's RSA key is RFC 7520's: it verifies the RFC 7520 §4.1 RS256 example.
    @Test func rsaKeyVerifiesRFC7520() throws {
        let set = try JWKSet.parse(VectorFiles.bytes("external/pyjwt/jwk_rsa_pub.json"))
        let example = try VectorFiles.json("external/rfc7520-cookbook/jws/4_1.rsa_v15_signature.json")
        let token = try #require(example["output"]?["compact"]?.string)
        #expect(Outcome.ofSignature(token, keys: set, allowed: [.rs256]) == .accepted)
    }
}
