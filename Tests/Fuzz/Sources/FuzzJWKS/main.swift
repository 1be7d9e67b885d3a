import FuzzDriver
import IDTokenKit

// Key documents: JWKSet.parse (a JWKS, a single JWK or a kid → PEM certificate map) and KeySetFile.parse (the
// same, or a key cache file wrapping one), as they read what a key URL or a key file returns. Then the set's
// invariants: every kept key is found by its kid, no kid is kept twice, merging a set with itself changes nothing,
// and a key that libcrypto accepted reports a size and signature length that fit its algorithm.
//
// The first input byte picks the reader; the rest is the document. Mode 2 reads the rest as one PEM text
// (PublicKey(pem:)), the path each certificate of a certificate map takes.

func check(_ set: JWKSet, _ bytes: [UInt8]) {
    var kids: Set<String> = []
    for key in set.keys {
        if let kid = key.kid {
            if !kids.insert(kid).inserted { Fuzz.fail("kid \(kid.debugDescription) kept twice: \(Fuzz.show(bytes))") }
            guard let found = set.key(kid: kid), found === key else {
                Fuzz.fail("kid \(kid.debugDescription) not found: \(Fuzz.show(bytes))")
            }
        }
        check(key, bytes)
    }
    for rejected in set.rejected { _ = rejected.description }
    let merged = set.merging(set)
    if merged.keys.count != set.keys.count { Fuzz.fail("merging a set with itself changed it: \(Fuzz.show(bytes))") }
}

func check(_ key: PublicKey, _ bytes: [UInt8]) {
    switch key.algorithm.keyType {
    case .rsa:
        if key.bits < PublicKey.minimumRSABits { Fuzz.fail("RSA key of \(key.bits) bits kept: \(Fuzz.show(bytes))") }
        if key.signatureLength != (key.bits + 7) / 8 { Fuzz.fail("RSA signature length \(key.signatureLength) for \(key.bits) bits") }
    case .ec(let curve):
        if key.signatureLength != 2 * curve.coordinateLength { Fuzz.fail("EC signature length \(key.signatureLength)") }
    }
    if key.thumbprint.count != 64 { Fuzz.fail("thumbprint \(key.thumbprint)") }
    // A garbage signature of the right length must not verify.
    let signature = [UInt8](repeating: 0x5A, count: key.signatureLength)
    if key.verify(signature: signature, message: bytes) { Fuzz.fail("a constant signature verified: \(Fuzz.show(bytes))") }
}

Fuzz.run { raw in
    guard let mode = raw.first else { return }
    let bytes = [UInt8](raw.dropFirst())
    switch mode % 3 {
    case 0:
        if let set = try? JWKSet.parse(bytes) { check(set, bytes) }
    case 1:
        if let contents = try? KeySetFile.parse(bytes, source: "fuzz input") { check(contents.keys, bytes) }
    default:
        for algorithm in [nil, JWSAlgorithm.rs256, .es256] {
            if let key = try? PublicKey(pem: String(decoding: bytes, as: UTF8.self), algorithm: algorithm, kid: "k") {
                check(key, bytes)
                if let algorithm, key.algorithm != algorithm { Fuzz.fail("asked for \(algorithm), got \(key.algorithm)") }
            }
        }
    }
}
