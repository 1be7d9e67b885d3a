import CLibCrypto
import Foundation
import JOSE

/// A private key generated for the test run, used to sign tokens whose payloads are hostile on purpose, so
/// that the payload checks are reached only after a signature that really verifies.
///
/// Shared by the test targets (JOSETests, HardeningTests); libcrypto signs, so no test depends on the code it
/// tests to make its tokens.
public final class TestSigner: @unchecked Sendable {
    public let algorithm: JWSAlgorithm
    /// The `kid` its tokens carry.
    public let kid: String
    private let pkey: OpaquePointer
    private let loadedKey: Result<PublicKey, KeyError>
    /// The matching verification key, bound to `algorithm` (a weak RSA key has none: see ``init(weakRSABits:kid:)``).
    public var publicKey: PublicKey { try! loadedKey.get() }
    /// The public key as DER SubjectPublicKeyInfo.
    public let spki: [UInt8]

    /// The public key as a PEM `PUBLIC KEY` block, the text a key-confusion attacker uses as an HMAC secret.
    public var publicKeyPEM: String {
        "-----BEGIN PUBLIC KEY-----\n" + Data(spki).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END PUBLIC KEY-----\n"
    }

    /// A fresh RSA-2048 (RS256) or P-256 (ES256) key pair.
    public convenience init(_ algorithm: JWSAlgorithm, kid: String) {
        precondition(algorithm == .rs256 || algorithm == .es256, "test signer supports RS256 and ES256")
        self.init(algorithm, kid: kid, rsaBits: 2048)
    }

    /// An RS256 signer with an RSA key of `bits` bits: under 2048, a key that key sets must refuse. Its
    /// ``publicKey`` is then unusable (PublicKey refuses it); use ``jwk(kid:alg:)`` to publish it.
    public convenience init(weakRSABits bits: Int, kid: String) {
        self.init(.rs256, kid: kid, rsaBits: bits)
    }

    private init(_ algorithm: JWSAlgorithm, kid: String, rsaBits: Int) {
        self.algorithm = algorithm
        self.kid = kid
        let ctx = EVP_PKEY_CTX_new_from_name(nil, algorithm == .rs256 ? "RSA" : "EC", nil)!
        defer { EVP_PKEY_CTX_free(ctx) }
        precondition(EVP_PKEY_keygen_init(ctx) == 1)
        if algorithm == .rs256 {
            precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(rsaBits)) == 1)
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
        let spki = spki
        loadedKey = Result { () throws(KeyError) in try PublicKey(spkiDER: spki, algorithm: algorithm, kid: kid) }
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A JWS signature over `message`: RSASSA-PKCS1-v1_5, or raw `r‖s` for ECDSA.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        algorithm == .es256 ? TestSigner.derToRaw(libcryptoSignature(message)) : libcryptoSignature(message)
    }

    /// The signature as libcrypto writes it (DER `SEQUENCE { r, s }` for ECDSA).
    public func libcryptoSignature(_ message: [UInt8]) -> [UInt8] {
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
    public static func derToRaw(_ der: [UInt8]) -> [UInt8] {
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
    public func token(header: [UInt8], payload: [UInt8]) -> String {
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return signingInput + "." + Base64URL.encode(sign(Array(signingInput.utf8)))
    }

    /// A compact JWS with this signer's `alg` and `kid` in the header.
    public func token(payload: [UInt8]) -> String {
        token(header: Array("{\"alg\":\"\(algorithm.rawValue)\",\"kid\":\"\(kid)\"}".utf8), payload: payload)
    }

    public func token(payload: String) -> String { token(payload: Array(payload.utf8)) }

    /// The one-key set holding the verification key.
    public var keySet: JWKSet { JWKSet(keys: [publicKey]) }

    /// A compact JWS over the given header and payload texts.
    public func token(header: String, payload: String) -> String { token(header: Array(header.utf8), payload: Array(payload.utf8)) }

    /// The public key as a JWK object (JSON text) with this `kid`, as a provider publishes it.
    public func jwk(kid: String, alg: String? = nil) -> String {
        let algMember = alg.map { ",\"alg\":\"\($0)\"" } ?? ""
        if algorithm == .es256 {
            // An uncompressed P-256 point ends the SubjectPublicKeyInfo: 0x04 ‖ x ‖ y.
            let point = spki.suffix(64)
            let x = Base64URL.encode(Array(point.prefix(32)))
            let y = Base64URL.encode(Array(point.suffix(32)))
            return "{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"\(kid)\",\"use\":\"sig\"\(algMember),\"x\":\"\(x)\",\"y\":\"\(y)\"}"
        }
        let n = Base64URL.encode(bigNumber(idtk_param_rsa_n()))
        let e = Base64URL.encode(bigNumber(idtk_param_rsa_e()))
        return "{\"kty\":\"RSA\",\"kid\":\"\(kid)\",\"use\":\"sig\"\(algMember),\"n\":\"\(n)\",\"e\":\"\(e)\"}"
    }

    /// An RSA parameter (modulus or exponent), big-endian without leading zeros.
    private func bigNumber(_ name: UnsafePointer<CChar>) -> [UInt8] {
        var bn: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(pkey, name, &bn) == 1)
        defer { BN_free(bn) }
        var out = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
        _ = out.withUnsafeMutableBufferPointer { BN_bn2bin(bn, $0.baseAddress) }
        return out
    }
}

/// HMAC-SHA256, for the classic key-confusion attack: a public key's bytes used as an HMAC secret.
public func hmacSHA256(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var length = 0
    let done = out.withUnsafeMutableBufferPointer { o in
        EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, key, key.count, message, message.count, o.baseAddress, 32, &length)
    }
    precondition(done != nil && length == 32)
    return out
}
