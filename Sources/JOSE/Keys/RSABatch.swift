internal import CJOSEShims
internal import CLibCrypto

/// A 2048-bit RSA key's constants for ``RSABatchPower``, computed once when the key is loaded: the Montgomery
/// constants of the C kernel (52-bit limbs, R² mod n, −n⁻¹ mod 2⁵²) and, for the libcrypto path, the modulus
/// and exponent as BIGNUMs with their Montgomery context.
final class RSABatchKey: @unchecked Sendable {
    /// Nil when the kernel does not take the key (its exponent is not 65537): libcrypto computes its lanes.
    let constants: UnsafeMutablePointer<idtk_rsa2048_key>?
    let modulus: OpaquePointer
    let exponent: OpaquePointer
    let montgomery: OpaquePointer
    /// The modulus as 256 big-endian bytes: a signature at or above it is refused by libcrypto, so the batch path
    /// leaves it to libcrypto.
    let modulusBytes: [UInt8]

    /// Nil unless `modulus` is exactly 2048 bits (the size the kernel computes; larger keys stay on the
    /// single-operation path).
    init?(modulus n: OpaquePointer, exponent e: OpaquePointer) {
        guard BN_num_bits(n) == 2048, BN_is_odd(n) == 1, BN_num_bits(e) <= 64 else { return nil }
        guard let modulus = BN_dup(n), let exponent = BN_dup(e), let montgomery = BN_MONT_CTX_new(),
              let ctx = BN_CTX_new() else { return nil }
        defer { BN_CTX_free(ctx) }
        guard BN_MONT_CTX_set(montgomery, modulus, ctx) == 1 else {
            BN_free(modulus); BN_free(exponent); BN_MONT_CTX_free(montgomery)
            ERR_clear_error()
            return nil
        }
        self.modulus = modulus
        self.exponent = exponent
        self.montgomery = montgomery
        // The kernel's constants, for e = 65537 (other exponents: libcrypto computes the lanes). R² mod n with
        // R = 2^2080 (40 limbs of 52 bits) by libcrypto's division: microseconds, where the C doubling takes ~85 µs.
        var modulusBytes = [UInt8](repeating: 0, count: 256), rSquared = [UInt8](repeating: 0, count: 256)
        var constants: UnsafeMutablePointer<idtk_rsa2048_key>?
        let word = UInt64(BN_get_word(exponent))
        if word == 65537, let r = BN_new() {
            defer { BN_free(r) }
            if BN_set_bit(r, 4160) == 1, BN_div(nil, r, r, modulus, ctx) == 1, BN_bn2binpad(modulus, &modulusBytes, 256) == 256,
               BN_bn2binpad(r, &rSquared, 256) == 256 {
                let made = UnsafeMutablePointer<idtk_rsa2048_key>.allocate(capacity: 1)
                if idtk_rsa2048_key_init(made, modulusBytes, 256, word, rSquared) == 1 {
                    constants = made
                } else {
                    made.deallocate()
                }
            }
            ERR_clear_error()
        }
        self.constants = constants
        self.modulusBytes = modulusBytes
    }

    deinit {
        constants?.deallocate()
        BN_free(modulus)
        BN_free(exponent)
        BN_MONT_CTX_free(montgomery)
    }
}

/// How ``RSABatchPower`` computes its lanes.
package enum RSABatchImplementation: String, Sendable, CaseIterable {
    /// Eight lanes in AVX-512 registers (vpmadd52luq/vpmadd52huq); only on CPUs with AVX-512 IFMA and VL.
    case ifma
    /// The kernel's arithmetic as portable C, one lane at a time: slower than libcrypto, there to check the
    /// arithmetic on any machine.
    case portable
    /// The IFMA implementation's eight-lane code with each vector instruction computed in C: it checks, on any
    /// machine, the lane layout and conversions that only the IFMA path uses. Slower still; for tests.
    case emulatedIFMA = "emulated-ifma"
    /// libcrypto's `BN_mod_exp_mont`, one lane at a time, with each key's Montgomery context.
    case libcrypto

    /// Whether this CPU runs it.
    package var isAvailable: Bool { self != .ifma || idtk_rsa_batch_ifma_available() == 1 }

    /// The implementation used unless one is asked for: the `IDTK_RSA_BATCH` environment variable (`ifma`,
    /// `portable`, `emulated-ifma` or `libcrypto`, e.g. to run the tests with the IFMA path off) when it names
    /// one this CPU runs, else IFMA when the CPU has it, else libcrypto. It only chooses how the numbers are computed: every
    /// implementation computes the same numbers, and the callers check them the same way.
    package static let selected: RSABatchImplementation = {
        if let name = getenv("IDTK_RSA_BATCH").map({ String(cString: $0) }),
           let chosen = RSABatchImplementation(rawValue: name), chosen.isAvailable {
            return chosen
        }
        return RSABatchImplementation.ifma.isAvailable ? .ifma : .libcrypto
    }()

    var code: Int32 {
        switch self {
        case .ifma: IDTK_RSA_BATCH_IFMA
        case .portable: IDTK_RSA_BATCH_PORTABLE
        case .emulatedIFMA: IDTK_RSA_BATCH_EMULATED_IFMA
        case .libcrypto: 0
        }
    }
}

/// Up to eight RSA-2048 public operations `s^e mod n` at once, each lane with its own signature and key: the
/// raw operation under RS256 verification, for callers that verify many independent signatures.
///
/// One instance holds its lanes' inputs and results; it is not for sharing between threads (give each its
/// own). A signature at or above its key's modulus is computed as given (libcrypto's RSA verification refuses
/// those before this step; a caller comparing the result with an encoding must refuse them too).
package final class RSABatchPower {
    package static let lanes = Int(IDTK_RSA_BATCH_LANES)
    package static let signatureLength = Int(IDTK_RSA2048_BYTES)

    package let implementation: RSABatchImplementation
    private let signatures: UnsafeMutablePointer<UInt8>
    private let results: UnsafeMutablePointer<UInt8>
    private let constants: UnsafeMutablePointer<UnsafePointer<idtk_rsa2048_key>?>
    private var keys: [RSABatchKey?]
    private let bnContext: OpaquePointer
    private let bnValue: OpaquePointer

    /// Nil when `implementation` does not run on this CPU.
    package init?(implementation: RSABatchImplementation = .selected) {
        guard implementation.isAvailable, let bnContext = BN_CTX_new(), let bnValue = BN_new() else { return nil }
        self.implementation = implementation
        self.bnContext = bnContext
        self.bnValue = bnValue
        signatures = .allocate(capacity: RSABatchPower.lanes * RSABatchPower.signatureLength)
        signatures.initialize(repeating: 0, count: RSABatchPower.lanes * RSABatchPower.signatureLength)
        results = .allocate(capacity: RSABatchPower.lanes * RSABatchPower.signatureLength)
        results.initialize(repeating: 0, count: RSABatchPower.lanes * RSABatchPower.signatureLength)
        constants = .allocate(capacity: RSABatchPower.lanes)
        constants.initialize(repeating: nil, count: RSABatchPower.lanes)
        keys = Array(repeating: nil, count: RSABatchPower.lanes)
    }

    deinit {
        signatures.deallocate()
        results.deallocate()
        constants.deallocate()
        BN_free(bnValue)
        BN_CTX_free(bnContext)
    }

    /// Whether `key` can be a lane's key: a 2048-bit RSA key.
    package static func accepts(_ key: PublicKey) -> Bool { key.batchKey != nil }

    /// Puts `signature` (exactly 256 bytes) and `key` (a 2048-bit RSA key) in `lane`; false, and the lane
    /// unchanged, when either does not fit.
    package func set(lane: Int, signature: UnsafeRawBufferPointer, key: PublicKey) -> Bool {
        guard (0..<RSABatchPower.lanes).contains(lane), signature.count == RSABatchPower.signatureLength,
              let batchKey = key.batchKey else { return false }
        UnsafeMutableRawPointer(signatures + lane * RSABatchPower.signatureLength)
            .copyMemory(from: signature.baseAddress!, byteCount: RSABatchPower.signatureLength)
        keys[lane] = batchKey
        constants[lane] = batchKey.constants.map { UnsafePointer($0) }
        return true
    }

    package func set(lane: Int, signature: [UInt8], key: PublicKey) -> Bool {
        signature.withUnsafeBytes { set(lane: lane, signature: $0, key: key) }
    }

    /// Computes lanes `0..<count` (every one of them set before). False when a lane was never set.
    package func run(lanes count: Int = RSABatchPower.lanes) -> Bool {
        guard (1...RSABatchPower.lanes).contains(count), keys[0..<count].allSatisfy({ $0 != nil }) else { return false }
        let computed = implementation == .libcrypto ? 0
            : Int(idtk_rsa2048_batch_power(implementation.code, constants, signatures, results, count))
        // libcrypto for the lanes the kernel did not take (exponent not 65537), or all of them when chosen.
        for lane in 0..<count where computed >> lane & 1 == 0 {
            let key = keys[lane]!
            let offset = lane * RSABatchPower.signatureLength
            guard BN_bin2bn(signatures + offset, Int32(RSABatchPower.signatureLength), bnValue) != nil,
                  BN_mod_exp_mont(bnValue, bnValue, key.exponent, key.modulus, bnContext, key.montgomery) == 1,
                  BN_bn2binpad(bnValue, results + offset, Int32(RSABatchPower.signatureLength)) == Int32(RSABatchPower.signatureLength)
            else {
                ERR_clear_error()
                return false
            }
        }
        return true
    }

    /// Calls `body` with lane `lane`'s result of the last ``run(lanes:)``: 256 big-endian bytes.
    package func withResult<R>(lane: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition((0..<RSABatchPower.lanes).contains(lane))
        return try body(UnsafeRawBufferPointer(start: results + lane * RSABatchPower.signatureLength,
                                               count: RSABatchPower.signatureLength))
    }

    /// Lane `lane`'s result of the last ``run(lanes:)`` (for tests and tools).
    package func result(lane: Int) -> [UInt8] { withResult(lane: lane) { Array($0) } }
}
