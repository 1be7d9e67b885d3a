import CLibCrypto
import Foundation
import JOSE

/// A private key generated for the test run, used to sign tokens whose payloads are hostile on purpose, so
/// that the payload checks are reached only after a signature that really verifies.
final class TestSigner: @unchecked Sendable {
    let algorithm: JWSAlgorithm
    private let pkey: OpaquePointer
    /// The matching verification key, bound to `algorithm`.
    let publicKey: PublicKey
    /// The public key as DER SubjectPublicKeyInfo.
    let spki: [UInt8]

    /// The public key as a PEM `PUBLIC KEY` block, the text a key-confusion attacker uses as an HMAC secret.
    var publicKeyPEM: String {
        "-----BEGIN PUBLIC KEY-----\n" + Data(spki).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END PUBLIC KEY-----\n"
    }

    /// A fresh RSA-2048 (RS256) or P-256 (ES256) key pair.
    init(_ algorithm: JWSAlgorithm, kid: String) {
        precondition(algorithm == .rs256 || algorithm == .es256, "test signer supports RS256 and ES256")
        self.algorithm = algorithm
        let ctx = EVP_PKEY_CTX_new_from_name(nil, algorithm == .rs256 ? "RSA" : "EC", nil)!
        defer { EVP_PKEY_CTX_free(ctx) }
        precondition(EVP_PKEY_keygen_init(ctx) == 1)
        if algorithm == .rs256 {
            precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048) == 1)
        } else {
            precondition(EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1)
        }
        var key: OpaquePointer?
        precondition(EVP_PKEY_generate(ctx, &key) == 1)
        pkey = key!
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pkey, &der)
        precondition(length > 0)
        spki = Array(UnsafeBufferPointer(start: der!, count: Int(length)))
        CRYPTO_free(der, #fileID, #line)
        publicKey = try! PublicKey(spkiDER: spki, algorithm: algorithm, kid: kid)
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A JWS signature over `message`: RSASSA-PKCS1-v1_5, or raw `r‖s` for ECDSA.
    func sign(_ message: [UInt8]) -> [UInt8] {
        algorithm == .es256 ? TestSigner.derToRaw(libcryptoSignature(message)) : libcryptoSignature(message)
    }

    /// The signature as libcrypto writes it (DER `SEQUENCE { r, s }` for ECDSA).
    func libcryptoSignature(_ message: [UInt8]) -> [UInt8] {
        let md = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(md) }
        precondition(EVP_DigestSignInit(md, nil, EVP_sha256(), nil, pkey) == 1)
        var length = 0
        precondition(message.withUnsafeBufferPointer { EVP_DigestSign(md, nil, &length, $0.baseAddress, $0.count) } == 1)
        var signature = [UInt8](repeating: 0, count: length)
        let ok = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer { EVP_DigestSign(md, out.baseAddress, &length, $0.baseAddress, $0.count) }
        }
        precondition(ok == 1)
        signature.removeSubrange(length...)
        return signature
    }

    /// The DER `SEQUENCE { r, s }` that libcrypto produces, as the 64-byte `r‖s` JWS uses.
    static func derToRaw(_ der: [UInt8]) -> [UInt8] {
        der.withUnsafeBufferPointer { buffer -> [UInt8] in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let sig = d2i_ECDSA_SIG(nil, &cursor, buffer.count)!
            defer { ECDSA_SIG_free(sig) }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(sig, &r, &s)
            var raw = [UInt8](repeating: 0, count: 64)
            raw.withUnsafeMutableBufferPointer { out in
                _ = BN_bn2binpad(r, out.baseAddress, 32)
                _ = BN_bn2binpad(s, out.baseAddress! + 32, 32)
            }
            return raw
        }
    }

    /// A compact JWS over the given header and payload bytes (each base64url-encoded as given, however odd).
    func token(header: [UInt8], payload: [UInt8]) -> String {
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return signingInput + "." + Base64URL.encode(sign(Array(signingInput.utf8)))
    }

    /// A compact JWS with this signer's `alg` and `kid` in the header.
    func token(payload: [UInt8]) -> String {
        token(header: Array("{\"alg\":\"\(algorithm.rawValue)\",\"kid\":\"\(publicKey.kid!)\"}".utf8), payload: payload)
    }

    func token(payload: String) -> String { token(payload: Array(payload.utf8)) }

    /// The one-key set holding the verification key.
    var keySet: JWKSet { JWKSet(keys: [publicKey]) }
}
