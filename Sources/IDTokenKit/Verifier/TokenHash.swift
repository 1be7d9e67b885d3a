/// A fast, seeded, non-cryptographic 64-bit hash of a whole token, for placing it in the
/// ``VerifiedTokenCache`` and the audit's verdict cache: the project's one such hash.
///
/// SHA-256 of a one-kilobyte token costs several microseconds, more than the whole budget of a cache hit. This
/// hash, in the manner of wyhash, folds sixteen bytes per 64 × 64 → 128-bit multiplication, in three independent
/// lanes so that the multiplications overlap: a few hundred instructions for a Firebase ID token. It only spreads
/// tokens over buckets: a hit always compares the stored token byte for byte, so a collision, accidental or
/// crafted, costs a comparison and never serves the wrong token. The seed is random per cache, so that nobody
/// can aim tokens at one bucket without knowing it.
package struct TokenHash {
    package let seed: UInt64

    package init(seed: UInt64) { self.seed = seed }

    /// Odd 64-bit constants with well-mixed bits (wyhash's secret).
    private static let k0: UInt64 = 0xA076_1D64_78BD_642F
    private static let k1: UInt64 = 0xE703_7ED1_A0B4_28DB
    private static let k2: UInt64 = 0x8EBC_6AF0_9C88_C6E3
    private static let k3: UInt64 = 0x5899_65CC_7537_4CC3

    /// Both halves of the full product, folded: every bit of either input reaches the middle bits of the result.
    @inline(__always)
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @inline(__always)
    package func callAsFunction(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var s0 = seed ^ Self.fold(seed ^ Self.k0, Self.k1), s1 = s0, s2 = s0
        var last = (UInt64(0), UInt64(0))
        if let base = bytes.baseAddress {
            var p = base
            let end = base + count
            while end - p > 48 {
                s0 = Self.fold(p.loadUnaligned(as: UInt64.self) ^ Self.k1, p.loadUnaligned(fromByteOffset: 8, as: UInt64.self) ^ s0)
                s1 = Self.fold(p.loadUnaligned(fromByteOffset: 16, as: UInt64.self) ^ Self.k2, p.loadUnaligned(fromByteOffset: 24, as: UInt64.self) ^ s1)
                s2 = Self.fold(p.loadUnaligned(fromByteOffset: 32, as: UInt64.self) ^ Self.k3, p.loadUnaligned(fromByteOffset: 40, as: UInt64.self) ^ s2)
                p += 48
            }
            s0 ^= s1 ^ s2
            while end - p > 16 {
                s0 = Self.fold(p.loadUnaligned(as: UInt64.self) ^ Self.k1, p.loadUnaligned(fromByteOffset: 8, as: UInt64.self) ^ s0)
                p += 16
            }
            // The last sixteen bytes, overlapping bytes already read when the token is long enough; the length,
            // mixed in below, tells apart the inputs this could otherwise confuse.
            if count >= 16 {
                last = ((end - 16).loadUnaligned(as: UInt64.self), (end - 8).loadUnaligned(as: UInt64.self))
            } else if count >= 8 {
                last = (base.loadUnaligned(as: UInt64.self), (end - 8).loadUnaligned(as: UInt64.self))
            } else {
                for index in 0..<count { last.0 = last.0 &<< 8 | UInt64(base.load(fromByteOffset: index, as: UInt8.self)) }
            }
        }
        let h = Self.fold(last.0 ^ Self.k1, last.1 ^ s0)
        return Self.fold(Self.k0 ^ UInt64(truncatingIfNeeded: count), h ^ Self.k1)
    }
}
