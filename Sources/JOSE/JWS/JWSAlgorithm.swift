/// The JWS signature algorithms the verifier implements. Which of them a token may use is decided by the
/// profile (never by the token): `none` and the HMAC family are not here at all, so no key and no policy can
/// ever accept them.
public enum JWSAlgorithm: String, Sendable, CaseIterable, Codable {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (Firebase, Apple, Facebook).
    case rs256 = "RS256"
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    case rs384 = "RS384"
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    case rs512 = "RS512"
    /// RSASSA-PSS with SHA-256 and MGF1 with SHA-256.
    case ps256 = "PS256"
    /// RSASSA-PSS with SHA-384 and MGF1 with SHA-384.
    case ps384 = "PS384"
    /// RSASSA-PSS with SHA-512 and MGF1 with SHA-512.
    case ps512 = "PS512"
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
    /// ECDSA on P-384 with SHA-384.
    case es384 = "ES384"

    /// The key family the algorithm needs.
    public var keyType: KeyType {
        switch self {
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512: return .rsa
        case .es256: return .ec(.p256)
        case .es384: return .ec(.p384)
        }
    }

    /// The digest length in bytes.
    @inlinable public var digestLength: Int {
        switch self {
        case .rs256, .ps256, .es256: return 32
        case .rs384, .ps384, .es384: return 48
        case .rs512, .ps512: return 64
        }
    }

    /// Looks an algorithm up by the bytes of a header's `alg` value.
    @inlinable
    package init?(utf8 name: UnsafeBufferPointer<UInt8>) {
        guard name.count == 5 else { return nil }
        let family = (name[0], name[1])
        let bits = (name[2], name[3], name[4])
        let size: Int
        switch bits {
        case (0x32, 0x35, 0x36): size = 256
        case (0x33, 0x38, 0x34): size = 384
        case (0x35, 0x31, 0x32): size = 512
        default: return nil
        }
        switch (family.0, family.1, size) {
        case (0x52, 0x53, 256): self = .rs256
        case (0x52, 0x53, 384): self = .rs384
        case (0x52, 0x53, 512): self = .rs512
        case (0x50, 0x53, 256): self = .ps256
        case (0x50, 0x53, 384): self = .ps384
        case (0x50, 0x53, 512): self = .ps512
        case (0x45, 0x53, 256): self = .es256
        case (0x45, 0x53, 384): self = .es384
        default: return nil
        }
    }
}

/// Elliptic curves the verifier supports.
public enum Curve: String, Sendable, Codable {
    /// NIST P-256 (secp256r1).
    case p256 = "P-256"
    /// NIST P-384 (secp384r1).
    case p384 = "P-384"

    /// Bytes in one coordinate, and in each half of a raw `r‖s` signature.
    public var coordinateLength: Int { self == .p256 ? 32 : 48 }

    /// The OpenSSL group name.
    var groupName: String { self == .p256 ? "prime256v1" : "secp384r1" }

    /// The group order n, big-endian: signature components must lie in [1, n−1].
    var order: [UInt8] {
        switch self {
        case .p256:
            return [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                    0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51]
        case .p384:
            return [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC7, 0x63, 0x4D, 0x81, 0xF4, 0x37, 0x2D, 0xDF,
                    0x58, 0x1A, 0x0D, 0xB2, 0x48, 0xB0, 0xA7, 0x7A, 0xEC, 0xEC, 0x19, 0x6A, 0xCC, 0xC5, 0x29, 0x73]
        }
    }
}

/// The family of a public key.
public enum KeyType: Sendable, Equatable, CustomStringConvertible {
    /// An RSA key.
    case rsa
    /// An elliptic-curve key on the given curve.
    case ec(Curve)

    public var description: String {
        switch self {
        case .rsa: return "RSA"
        case .ec(let curve): return "EC \(curve.rawValue)"
        }
    }
}
