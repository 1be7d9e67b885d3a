internal import CLibCrypto

/// Why a key was refused at load time.
public struct KeyError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Why the key was refused.
    public let reason: String
    /// A key error with `reason`.
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A public key parsed once into a libcrypto key object and bound to one signature algorithm.
///
/// Immutable and safe to share across threads: each thread verifies with its own duplicate of a context prepared
/// at load time, kept in a per-thread cache (see `VerifyContextCache`), instead of re-initialising one for
/// every verification (about 9 % of an RSA verification) or duplicating one (about 0.5 %).
public final class PublicKey: @unchecked Sendable {
    /// The algorithm this key verifies; a token whose header names another is refused.
    public let algorithm: JWSAlgorithm
    /// The key's `kid`, when it has one.
    public let kid: String?
    /// The size of the key in bits (RSA modulus or curve size).
    public let bits: Int
    /// RSA: the exact signature length (the modulus length in bytes). EC: the raw `r‖s` length.
    public let signatureLength: Int
    /// A fingerprint of the key material (SHA-256 of its SubjectPublicKeyInfo DER), hex.
    public let thumbprint: String

    let pkey: OpaquePointer
    let prepared: OpaquePointer
    let digest: OpaquePointer
    /// Identifies this key in the per-thread context caches; never reused within the process.
    let contextID = VerifyContextCache.newID()
    /// A 2048-bit RSA key's constants for the batch path (``RSABatchPower``), computed here once; nil for
    /// other keys.
    let batchKey: RSABatchKey?

    /// The smallest RSA modulus accepted. Moduli with the ROCA fingerprint (CVE-2017-15361) are refused at
    /// any size.
    public static let minimumRSABits = 2048

    private init(pkey: OpaquePointer, algorithm: JWSAlgorithm, kid: String?) throws(KeyError) {
        // Ownership of `pkey` passes to this object as soon as it exists; on failure below, deinit frees it.
        var prepared: OpaquePointer?
        defer { if prepared == nil { EVP_PKEY_free(pkey) } }

        let bits = Int(EVP_PKEY_get_bits(pkey))
        let baseID = EVP_PKEY_get_base_id(pkey)
        var batchKey: RSABatchKey?
        switch algorithm.keyType {
        case .rsa:
            guard baseID == EVP_PKEY_RSA || baseID == EVP_PKEY_RSA_PSS else {
                throw KeyError("\(algorithm.rawValue) needs an RSA key")
            }
            guard bits >= PublicKey.minimumRSABits else {
                throw KeyError("RSA key of \(bits) bits is below the \(PublicKey.minimumRSABits)-bit minimum")
            }
            var modulus: OpaquePointer?
            guard EVP_PKEY_get_bn_param(pkey, idtk_param_rsa_n(), &modulus) == 1, let modulus else {
                ERR_clear_error()
                throw KeyError("libcrypto could not read the RSA modulus")
            }
            defer { BN_free(modulus) }
            guard !ROCAFingerprint.matches(modulus) else {
                throw KeyError("the RSA modulus has the ROCA fingerprint (CVE-2017-15361): its private key can be recovered")
            }
            var exponent: OpaquePointer?
            if EVP_PKEY_get_bn_param(pkey, idtk_param_rsa_e(), &exponent) == 1, let exponent {
                batchKey = RSABatchKey(modulus: modulus, exponent: exponent)
                BN_free(exponent)
            }
            ERR_clear_error()
        case .ec(let curve):
            guard baseID == EVP_PKEY_EC else { throw KeyError("\(algorithm.rawValue) needs an EC key") }
            guard bits == curve.coordinateLength * 8 else {
                throw KeyError("\(algorithm.rawValue) needs a \(curve.rawValue) key, not a \(bits)-bit curve")
            }
        }
        let md: OpaquePointer? = switch algorithm.digestLength {
        case 32: EVP_sha256()
        case 48: EVP_sha384()
        default: EVP_sha512()
        }
        guard let md, let ctx = EVP_PKEY_CTX_new(pkey, nil) else { throw KeyError("libcrypto could not make a context") }
        var ok = EVP_PKEY_verify_init(ctx) == 1 && idtk_pkey_ctx_set_signature_md(ctx, md) > 0
        switch algorithm {
        case .rs256, .rs384, .rs512:
            ok = ok && idtk_pkey_ctx_set_rsa_padding(ctx, idtk_rsa_pkcs1_padding()) > 0
        case .ps256, .ps384, .ps512:
            ok = ok && idtk_pkey_ctx_set_rsa_padding(ctx, idtk_rsa_pkcs1_pss_padding()) > 0
                && idtk_pkey_ctx_set_rsa_mgf1_md(ctx, md) > 0
                && idtk_pkey_ctx_set_rsa_pss_saltlen(ctx, Int32(algorithm.digestLength)) > 0
        case .es256, .es384:
            break
        }
        guard ok else {
            EVP_PKEY_CTX_free(ctx)
            ERR_clear_error()
            throw KeyError("libcrypto refused the key for \(algorithm.rawValue)")
        }
        prepared = ctx
        self.pkey = pkey
        self.prepared = ctx
        self.digest = md
        self.algorithm = algorithm
        self.kid = kid
        self.bits = bits
        self.batchKey = batchKey
        switch algorithm.keyType {
        case .rsa: self.signatureLength = (bits + 7) / 8
        case .ec(let curve): self.signatureLength = curve.coordinateLength * 2
        }
        self.thumbprint = PublicKey.spkiThumbprint(pkey)
    }

    deinit {
        EVP_PKEY_CTX_free(prepared)
        EVP_PKEY_free(pkey)
    }

    /// The same key in objects of its own, for a thread that verifies apart from the others (an audit worker):
    /// every verification retains and releases the key, and when threads on several cores share one object, each of
    /// those reference counts moves the object's cache line between cores. The replica shares the libcrypto key,
    /// which verifications only read, and computes the batch path's constants again; nil when libcrypto cannot copy
    /// the prepared context.
    package func replica() -> PublicKey? {
        guard let context = EVP_PKEY_CTX_dup(prepared) else {
            ERR_clear_error()
            return nil
        }
        EVP_PKEY_up_ref(pkey)
        return PublicKey(replicating: self, prepared: context)
    }

    private init(replicating other: PublicKey, prepared: OpaquePointer) {
        self.pkey = other.pkey
        self.prepared = prepared
        self.digest = other.digest
        self.algorithm = other.algorithm
        self.kid = other.kid?.inStorageOfItsOwn
        self.bits = other.bits
        self.signatureLength = other.signatureLength
        self.thumbprint = other.thumbprint.inStorageOfItsOwn
        self.batchKey = other.batchKey.flatMap { RSABatchKey(modulus: $0.modulus, exponent: $0.exponent) }
    }

    // MARK: Construction

    /// An RSA key from its big-endian modulus and public exponent.
    public convenience init(rsaModulus modulus: [UInt8], exponent: [UInt8], algorithm: JWSAlgorithm = .rs256,
                            kid: String? = nil) throws(KeyError) {
        guard algorithm.keyType == .rsa else { throw KeyError("\(algorithm.rawValue) is not an RSA algorithm") }
        let n = modulus.drop(while: { $0 == 0 })
        let e = exponent.drop(while: { $0 == 0 })
        guard !n.isEmpty else { throw KeyError("RSA modulus is empty") }
        guard !e.isEmpty, e.count <= 8 else { throw KeyError("RSA exponent is missing or too large") }
        guard e.last! & 1 == 1, e.count > 1 || e.first! >= 3 else { throw KeyError("RSA exponent must be odd and at least 3") }
        // The parameter builder keeps pointers to the BIGNUMs until it is turned into parameters.
        let bn = Array(n).withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let be = Array(e).withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer { BN_free(bn); BN_free(be) }
        guard let bn, let be, let pkey = PublicKey.fromData(type: "RSA", build: { builder in
            OSSL_PARAM_BLD_push_BN(builder, idtk_param_rsa_n(), bn) == 1 && OSSL_PARAM_BLD_push_BN(builder, idtk_param_rsa_e(), be) == 1
        }) else { throw KeyError("libcrypto refused the RSA key") }
        try self.init(pkey: pkey, algorithm: algorithm, kid: kid)
    }

    /// An EC key from its affine coordinates, which must be a point on the curve.
    public convenience init(curve: Curve, x: [UInt8], y: [UInt8], kid: String? = nil) throws(KeyError) {
        let length = curve.coordinateLength
        guard x.count == length, y.count == length else {
            throw KeyError("\(curve.rawValue) coordinates must be \(length) bytes each")
        }
        let point = [0x04] + x + y
        // The parameter builder keeps pointers to the group name and the point until it is turned into parameters.
        let pkey: OpaquePointer? = curve.groupName.withCString { group in
            point.withUnsafeBytes { pub in
                PublicKey.fromData(type: "EC", build: { builder in
                    OSSL_PARAM_BLD_push_utf8_string(builder, idtk_param_group(), group, 0) == 1
                        && OSSL_PARAM_BLD_push_octet_string(builder, idtk_param_pub(), pub.baseAddress, pub.count) == 1
                })
            }
        }
        guard let pkey else { throw KeyError("the point is not on \(curve.rawValue)") }
        guard PublicKey.publicCheck(pkey) else {
            EVP_PKEY_free(pkey)
            throw KeyError("the point is not a valid \(curve.rawValue) public key")
        }
        try self.init(pkey: pkey, algorithm: curve == .p256 ? .es256 : .es384, kid: kid)
    }

    /// A key from a PEM `PUBLIC KEY` block or a PEM X.509 `CERTIFICATE` (whose validity dates are not checked:
    /// providers publish certificates only as containers for their keys).
    public convenience init(pem: String, algorithm: JWSAlgorithm? = nil, kid: String? = nil) throws(KeyError) {
        let bytes = Array(pem.utf8)
        let pkey: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = idtk_bio_new_mem(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            if pem.contains("BEGIN CERTIFICATE") {
                guard let cert = PEM_read_bio_X509(bio, nil, nil, nil) else { return nil }
                defer { X509_free(cert) }
                return X509_get_pubkey(cert)
            }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let pkey else {
            ERR_clear_error()
            throw KeyError("not a PEM public key or certificate")
        }
        try self.init(pkey: pkey, algorithm: algorithm ?? PublicKey.defaultAlgorithm(pkey), kid: kid)
    }

    /// A key from a DER SubjectPublicKeyInfo.
    public convenience init(spkiDER der: [UInt8], algorithm: JWSAlgorithm? = nil, kid: String? = nil) throws(KeyError) {
        let pkey: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let pkey else {
            ERR_clear_error()
            throw KeyError("not a DER SubjectPublicKeyInfo")
        }
        try self.init(pkey: pkey, algorithm: algorithm ?? PublicKey.defaultAlgorithm(pkey), kid: kid)
    }

    private static func defaultAlgorithm(_ pkey: OpaquePointer) -> JWSAlgorithm {
        if EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC { return EVP_PKEY_get_bits(pkey) == 384 ? .es384 : .es256 }
        return .rs256
    }

    private static func fromData(type: String, build: (OpaquePointer) -> Bool) -> OpaquePointer? {
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard build(builder), let params = OSSL_PARAM_BLD_to_param(builder) else { ERR_clear_error(); return nil }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1,
              EVP_PKEY_fromdata(ctx, &pkey, idtk_evp_pkey_public_key_selection(), params) == 1 else {
            ERR_clear_error()
            return nil
        }
        return pkey
    }

    private static func publicCheck(_ pkey: OpaquePointer) -> Bool {
        guard let ctx = EVP_PKEY_CTX_new(pkey, nil) else { return false }
        defer { EVP_PKEY_CTX_free(ctx) }
        let ok = EVP_PKEY_public_check(ctx) == 1
        ERR_clear_error()
        return ok
    }

    private static func spkiThumbprint(_ pkey: OpaquePointer) -> String {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pkey, &out)
        guard length > 0, let out else { return "" }
        defer { CRYPTO_free(out, #fileID, #line) }
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { _ = idtk_sha256(out, Int(length), $0.baseAddress) }
        return digest.map { String($0, radix: 16).leftPad(2) }.joined()
    }

    // MARK: Verification

    /// Verifies `signature` over `message` (for JWS, the ASCII bytes `header.payload` as received).
    ///
    /// RSA signatures must be exactly the modulus length; ECDSA signatures must be raw `r‖s` of exactly twice
    /// the coordinate length, with r and s in [1, n−1].
    @inlinable
    package func verify(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> Bool {
        guard signature.count == signatureLength else { return false }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { digest in
            hash(message, into: digest)
            return verify(signature: signature, digest: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(digest)[..<algorithm.digestLength]))
        }
    }

    @usableFromInline
    func hash(_ message: UnsafeRawBufferPointer, into digest: UnsafeMutableBufferPointer<UInt8>) {
        switch algorithm.digestLength {
        case 32: _ = idtk_sha256(message.baseAddress, message.count, digest.baseAddress)
        case 48: _ = idtk_sha384(message.baseAddress, message.count, digest.baseAddress)
        default: _ = idtk_sha512(message.baseAddress, message.count, digest.baseAddress)
        }
    }

    /// Verifies a signature over a precomputed digest of the algorithm's hash.
    @usableFromInline
    func verify(signature: UnsafeRawBufferPointer, digest: UnsafeRawBufferPointer) -> Bool {
        guard signature.count == signatureLength else { return false }
        let ok = VerifyContextCache.withContext(for: self) { ctx in
            let result: Int32
            if case .ec(let curve) = algorithm.keyType {
                result = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * curve.coordinateLength + 9) { der in
                    guard let length = ECDSASignature.rawToDER(signature, curve: curve, into: der) else { return 0 }
                    return EVP_PKEY_verify(ctx, der.baseAddress, length,
                                           digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count)
                }
            } else {
                result = EVP_PKEY_verify(ctx, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
                                         digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count)
            }
            return result == 1
        }
        if !ok { ERR_clear_error() }
        return ok
    }

    /// Verifies a signature given as bytes (convenience for tests and tools).
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        signature.withUnsafeBytes { s in message.withUnsafeBytes { m in verify(signature: s, message: m) } }
    }
}

extension String {
    func leftPad(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
