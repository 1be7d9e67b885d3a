internal import CLibCrypto

/// The yardstick the benchmarks measure against: one `EVP_PKEY_verify` over a precomputed digest, on a
/// context prepared once, with the key already loaded. This is the cost of the public-key operation itself,
/// the floor no token verifier can go under. Not for verifying tokens.
package final class RawVerifyBaseline: @unchecked Sendable {
    private let ctx: OpaquePointer
    private let signature: [UInt8]
    private let digest: [UInt8]

    /// Prepares the operation for `key` with a signature (in JWS form) over `message`.
    /// Returns nil when the signature does not verify, so a baseline is never measured on a failing path.
    package init?(key: PublicKey, signature jwsSignature: [UInt8], message: [UInt8]) {
        guard let ctx = EVP_PKEY_CTX_dup(key.prepared) else { return nil }
        self.ctx = ctx
        var digest = [UInt8](repeating: 0, count: 64)
        message.withUnsafeBytes { m in digest.withUnsafeMutableBufferPointer { key.hash(m, into: $0) } }
        self.digest = Array(digest.prefix(key.algorithm.digestLength))
        if case .ec(let curve) = key.algorithm.keyType {
            var der = [UInt8](repeating: 0, count: 2 * curve.coordinateLength + 9)
            let length = jwsSignature.withUnsafeBytes { raw in
                der.withUnsafeMutableBufferPointer { ECDSASignature.rawToDER(raw, curve: curve, into: $0) }
            }
            guard let length else { return nil }
            self.signature = Array(der.prefix(length))
        } else {
            self.signature = jwsSignature
        }
        guard run() else { return nil }
    }

    deinit { EVP_PKEY_CTX_free(ctx) }

    /// One verification. Not thread-safe: give each thread its own baseline.
    @inline(never)
    package func run() -> Bool {
        EVP_PKEY_verify(ctx, signature, signature.count, digest, digest.count) == 1
    }
}
