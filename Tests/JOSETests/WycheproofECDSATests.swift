import IDTokenKit
import JOSE
import TestSupport
import Testing

/// Every Wycheproof ECDSA P-256 SHA-256 case in the IEEE P1363 form (raw `r‖s`, the form JWS ES256 uses),
/// through ``PublicKey/verify(signature:message:)``. Any length other than 64 bytes, and r or s outside
/// [1, n−1], must fail; the file has no `acceptable` cases.
@Suite struct WycheproofECDSATests {
    @Test func p256P1363() throws {
        let vectors = try WycheproofFile("ecdsa_secp256r1_sha256_p1363_test.json")
        var ran = 0
        var valid = 0
        var jwkGroups = 0
        for group in vectors.groups {
            let publicKey = group["publicKey"]!
            #expect(publicKey["curve"]?.string == "secp256r1")
            let key = try PublicKey(curve: .p256, x: Hex.fixedWidth(publicKey["wx"]!.string!, 32),
                                    y: Hex.fixedWidth(publicKey["wy"]!.string!, 32))
            #expect(key.algorithm == .es256)
            #expect(key.signatureLength == 64)
            // The group's JWK (present in most groups) and DER SubjectPublicKeyInfo describe the same key.
            if let jwk = group["publicKeyJwk"] {
                #expect(try JWK.publicKey(from: JSONTree.parse(jwk.jsonText)).thumbprint == key.thumbprint)
                jwkGroups += 1
            }
            #expect(try PublicKey(spkiDER: Hex.decode(group["publicKeyDer"]!.string!)).thumbprint == key.thumbprint)
            for test in WycheproofFile.cases(group) {
                let accepted = key.verify(signature: test.signature, message: test.message)
                #expect(test.result != .acceptable, "\(test): no acceptable cases expected in the P1363 file")
                #expect(accepted == (test.result == .valid), "\(test)")
                if test.result == .valid { valid += 1 }
                ran += 1
            }
        }
        #expect(ran == vectors.declaredCount)
        #expect(ran == 262)
        #expect(valid == 173)
        #expect(jwkGroups == 103)
    }
}
