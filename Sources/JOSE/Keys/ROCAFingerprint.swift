internal import CLibCrypto

/// Detects RSA moduli made by the Infineon key generator broken in 2017 (ROCA, CVE-2017-15361), whose private
/// keys can be recovered from the public key.
///
/// Such a modulus is, modulo each small prime p below, a power of 65537; a random modulus passes all 38 tests
/// with negligible probability. This is the fingerprint published with the attack (Nemec et al., CCS 2017);
/// it costs 38 word-sized remainders, once per key load.
enum ROCAFingerprint {
    static let primes: [UInt] = [3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79,
                                 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167]

    /// For each prime, the residues that are powers of 65537, as a bit set (every prime is below 192).
    static let powers: [(UInt64, UInt64, UInt64)] = primes.map { p in
        var bits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var x: UInt = 1
        repeat {
            switch x / 64 {
            case 0: bits.0 |= 1 << (x % 64)
            case 1: bits.1 |= 1 << (x % 64)
            default: bits.2 |= 1 << (x % 64)
            }
            x = x * (65537 % p) % p
        } while x != 1
        return bits
    }

    /// Whether the modulus `n` has the fingerprint.
    static func matches(_ n: OpaquePointer) -> Bool {
        for (k, p) in primes.enumerated() {
            let r = UInt(BN_mod_word(n, p))
            let bits = powers[k]
            let word = r / 64 == 0 ? bits.0 : r / 64 == 1 ? bits.1 : bits.2
            if word & (1 << (r % 64)) == 0 { return false }
        }
        return true
    }
}
