/// SipHash-2-4 with a 128-bit output (Aumasson and Bernstein; the reference implementation's `siphash` with
/// `outlen` 16), fed in pieces: a keyed pseudorandom function, so that whoever does not know the key cannot
/// make two inputs share an output except by chance (2⁻¹²⁸ a pair).
///
/// The audit's ``VerdictCache`` keys verdicts with it: one pass over the token, about a third of the
/// instructions of SHA-256, and no way for a log's author to aim a token at another token's verdict.
struct SipHash128 {
    private var v0: UInt64, v1: UInt64, v2: UInt64, v3: UInt64
    /// Bytes not yet compressed (fewer than eight), little-endian.
    private var tail: UInt64 = 0
    private var tailCount = 0
    private var length = 0

    init(key: (UInt64, UInt64)) {
        v0 = key.0 ^ 0x736F_6D65_7073_6575
        v1 = key.1 ^ 0x646F_7261_6E64_6F6D ^ 0xEE
        v2 = key.0 ^ 0x6C79_6765_6E65_7261
        v3 = key.1 ^ 0x7465_6462_7974_6573
    }

    @inline(__always)
    private mutating func round() {
        v0 = v0 &+ v1; v1 = v1.rotatedLeft(13); v1 ^= v0; v0 = v0.rotatedLeft(32)
        v2 = v2 &+ v3; v3 = v3.rotatedLeft(16); v3 ^= v2
        v0 = v0 &+ v3; v3 = v3.rotatedLeft(21); v3 ^= v0
        v2 = v2 &+ v1; v1 = v1.rotatedLeft(17); v1 ^= v2; v2 = v2.rotatedLeft(32)
    }

    @inline(__always)
    private mutating func compress(_ word: UInt64) {
        v3 ^= word
        round()
        round()
        v0 ^= word
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        length += count
        var p = 0
        if tailCount > 0 {
            while tailCount < 8 && p < count {
                tail |= UInt64(bytes[p]) << (8 * UInt64(tailCount))
                tailCount += 1
                p += 1
            }
            guard tailCount == 8 else { return }
            compress(tail)
            tail = 0
            tailCount = 0
        }
        while count - p >= 8 {
            compress(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: p, as: UInt64.self)))
            p += 8
        }
        while p < count {
            tail |= UInt64(bytes[p]) << (8 * UInt64(tailCount))
            tailCount += 1
            p += 1
        }
    }

    mutating func update(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { update($0) }
    }

    /// The two 64-bit halves of the output; as bytes, each is written little-endian, first half first.
    mutating func finalize() -> (UInt64, UInt64) {
        compress(UInt64(truncatingIfNeeded: length & 0xFF) << 56 | tail)
        v2 ^= 0xEE
        for _ in 0..<4 { round() }
        let first = v0 ^ v1 ^ v2 ^ v3
        v1 ^= 0xDD
        for _ in 0..<4 { round() }
        return (first, v0 ^ v1 ^ v2 ^ v3)
    }
}

extension UInt64 {
    @inline(__always)
    fileprivate func rotatedLeft(_ n: UInt64) -> UInt64 { self << n | self >> (64 - n) }
}
