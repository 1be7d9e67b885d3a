import IDTokenKit
import JOSE
import TestSupport
import Testing

/// Every Wycheproof RSASSA-PKCS1-v1_5 SHA-256 case (2048, 3072 and 4096-bit keys) and every RSASSA-PSS
/// SHA-256 / MGF1-SHA-256 / salt-32 case, through ``PublicKey/verify(signature:message:)``.
///
/// Policy for `acceptable`: the only acceptable cases in these files are flagged `MissingNull`, a DigestInfo
/// that omits the NULL algorithm parameters. RFC 8017 §9.2 note 2 allows verifiers to accept it for
/// compatibility with old signers, but no JOSE signer has ever produced it, and accepting a second encoding
/// of the same signature only widens what an attacker can try. libcrypto compares against the one DER
/// encoding and rejects it; the test asserts that rejection so a change of behaviour is noticed.
@Suite struct WycheproofRSATests {
    @Test(arguments: ["rsa_signature_2048_sha256_test.json", "rsa_signature_3072_sha256_test.json",
                      "rsa_signature_4096_sha256_test.json"])
    func pkcs1SHA256(file: String) throws {
        let vectors = try WycheproofFile(file)
        var ran = 0
        for group in vectors.groups {
            let keySize = Int(group["keySize"]!.int64!)
            let modulus = Hex.decode(group["publicKey"]!["modulus"]!.string!)
            let exponent = Hex.decode(group["publicKey"]!["publicExponent"]!.string!)
            let cases = WycheproofFile.cases(group)
            if keySize < PublicKey.minimumRSABits {
                // Small keys are refused at load, so none of their signatures can ever be accepted.
                #expect(throws: KeyError.self) { try PublicKey(rsaModulus: modulus, exponent: exponent, algorithm: .rs256) }
                ran += cases.count
                continue
            }
            let key = try PublicKey(rsaModulus: modulus, exponent: exponent, algorithm: .rs256)
            #expect(key.bits == keySize)
            #expect(key.signatureLength == keySize / 8)
            // The same key through the group's JWK, DER SubjectPublicKeyInfo and PEM must be the same key.
            let jwk = try JSONTree.parse(group["keyJwk"]!.jsonText)
            #expect(try JWK.publicKey(from: jwk).thumbprint == key.thumbprint)
            #expect(try PublicKey(spkiDER: Hex.decode(group["publicKeyDer"]!.string!)).thumbprint == key.thumbprint)
            #expect(try PublicKey(pem: group["publicKeyPem"]!.string!).thumbprint == key.thumbprint)

            for test in cases {
                let accepted = key.verify(signature: test.signature, message: test.message)
                switch test.result {
                case .valid:
                    #expect(accepted, "\(file) \(test)")
                case .invalid:
                    #expect(!accepted, "\(file) \(test)")
                case .acceptable:
                    #expect(test.flags == ["MissingNull"], "\(file) \(test): an acceptable case with no written policy")
                    #expect(!accepted, "\(file) \(test): MissingNull DigestInfo must be rejected")
                }
                ran += 1
            }
        }
        #expect(ran == vectors.declaredCount)
        #expect(ran >= 258)
    }

    /// The PSS file, through a key bound to PS256 (SHA-256, MGF1-SHA-256, salt length 32: RFC 7518 §3.5).
    @Test func pssSHA256Salt32() throws {
        let vectors = try WycheproofFile("rsa_pss_2048_sha256_mgf1_32_test.json")
        var ran = 0
        for group in vectors.groups {
            #expect(group["sha"]?.string == "SHA-256" && group["mgfSha"]?.string == "SHA-256" && group["sLen"]?.int64 == 32)
            let key = try PublicKey(rsaModulus: Hex.decode(group["publicKey"]!["modulus"]!.string!),
                                    exponent: Hex.decode(group["publicKey"]!["publicExponent"]!.string!),
                                    algorithm: .ps256)
            let jwkKey = try JWK.publicKey(from: JSONTree.parse(group["publicKeyJwk"]!.jsonText))
            #expect(jwkKey.algorithm == .ps256)
            #expect(jwkKey.thumbprint == key.thumbprint)
            // The same modulus bound to RS256 accepts exactly the one PKCS#1 v1.5 signature in the file (tcId 108,
            // flagged WrongPrimitive) and nothing else: what a key accepts is decided by the algorithm it is bound to.
            let pkcs1 = try PublicKey(rsaModulus: Hex.decode(group["publicKey"]!["modulus"]!.string!),
                                      exponent: Hex.decode(group["publicKey"]!["publicExponent"]!.string!),
                                      algorithm: .rs256)
            for test in WycheproofFile.cases(group) {
                let accepted = key.verify(signature: test.signature, message: test.message)
                #expect(test.result != .acceptable, "\(test): no acceptable cases expected in the PSS file")
                #expect(accepted == (test.result == .valid), "\(test)")
                let isPKCS1 = test.flags == ["WrongPrimitive"]
                #expect(pkcs1.verify(signature: test.signature, message: test.message) == isPKCS1, "\(test) through an RS256 key")
                ran += 1
            }
        }
        #expect(ran == vectors.declaredCount)
        #expect(ran == 108)
    }
}
