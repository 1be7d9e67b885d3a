internal import CLibCrypto

/// Cryptographically secure random bytes from libcrypto's DRBG (`RAND_bytes`).
public enum SecureRandom {
    /// Why no random bytes could be produced: the DRBG is not seeded or failed. Callers must not fall back
    /// to a weaker source.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String { "libcrypto's random generator failed (RAND_bytes)" }
    }

    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(Failure) -> [UInt8] {
        guard count > 0 else { return [] }
        var ok = true
        let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            ok = RAND_bytes(buffer.baseAddress, Int32(count)) == 1
            initialized = count
        }
        guard ok else {
            ERR_clear_error()
            throw Failure()
        }
        return out
    }
}
