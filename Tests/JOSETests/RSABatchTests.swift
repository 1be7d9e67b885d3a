import CLibCrypto
import Foundation
@testable import JOSE
import TestSupport
import Testing

/// The batch RSA-2048 public operation (``RSABatchPower``) against libcrypto's `BN_mod_exp`, in every
/// implementation this CPU runs: the AVX-512 IFMA kernel (when present), its arithmetic as portable C, its
/// eight-lane code with the instructions emulated in C, and
/// libcrypto lane by lane (what runs when the IFMA path is off: `IDTK_RSA_BATCH=libcrypto`).
///
/// The million-pair run is scripts/test's Tests/RSABatchCheck (C, built -O2); here the Wycheproof cases and
/// `IDTK_RSA_BATCH_TEST_COUNT` random pairs (default 3,000) go through the Swift API the library uses.
@Suite struct RSABatchTests {
    static let implementations = RSABatchImplementation.allCases.filter(\.isAvailable)

    /// s^e mod n by libcrypto's BN_mod_exp, 256 big-endian bytes.
    static func reference(signature: [UInt8], modulus: [UInt8], exponent: UInt64) -> [UInt8] {
        let ctx = BN_CTX_new()!, s = BN_new()!, n = BN_new()!, e = BN_new()!, r = BN_new()!
        defer { BN_CTX_free(ctx); BN_free(s); BN_free(n); BN_free(e); BN_free(r) }
        BN_bin2bn(signature, Int32(signature.count), s)
        BN_bin2bn(modulus, Int32(modulus.count), n)
        BN_set_word(e, UInt(exponent))
        #expect(BN_mod_exp(r, s, e, n, ctx) == 1)
        var out = [UInt8](repeating: 0, count: 256)
        _ = BN_bn2binpad(r, &out, 256)
        return out
    }

    struct Pair {
        let signature: [UInt8]
        let key: PublicKey
        let modulus: [UInt8]
        let exponent: UInt64
        let label: String
    }

    /// Runs `pairs` through `implementation` in batches of `lanes(batch)` lanes and compares every lane with
    /// BN_mod_exp; returns how many lanes it compared.
    static func check(_ pairs: [Pair], _ implementation: RSABatchImplementation, lanes: (Int) -> Int) -> Int {
        guard let batch = RSABatchPower(implementation: implementation) else {
            Issue.record("\(implementation) is available but RSABatchPower refused it")
            return 0
        }
        var index = 0, compared = 0, batchNumber = 0
        while index < pairs.count {
            let count = min(lanes(batchNumber), pairs.count - index)
            for lane in 0..<count {
                #expect(batch.set(lane: lane, signature: pairs[index + lane].signature, key: pairs[index + lane].key))
            }
            #expect(batch.run(lanes: count))
            for lane in 0..<count {
                let pair = pairs[index + lane]
                let expected = reference(signature: pair.signature, modulus: pair.modulus, exponent: pair.exponent)
                #expect(batch.result(lane: lane) == expected, "\(implementation): \(pair.label), lane \(lane) of \(count)")
                compared += 1
            }
            index += count
            batchNumber += 1
        }
        return compared
    }

    @Test func implementationsThisCPURuns() {
        #expect(Self.implementations.contains(.portable) && Self.implementations.contains(.emulatedIFMA)
                && Self.implementations.contains(.libcrypto))
        #expect(RSABatchImplementation.selected.isAvailable)
        if ProcessInfo.processInfo.environment["IDTK_RSA_BATCH"] == nil {
            #expect(RSABatchImplementation.selected == (RSABatchImplementation.ifma.isAvailable ? .ifma : .libcrypto))
        }
    }

    /// Every signature of 256 bytes in Wycheproof's RSA-2048 PKCS#1 v1.5 SHA-256 file, with the group's key
    /// (e = 65537, and a few e = 3 keys whose lanes the kernel leaves to libcrypto), eight lanes at a time.
    @Test(arguments: implementations)
    func wycheproof2048(_ implementation: RSABatchImplementation) throws {
        let vectors = try WycheproofFile("rsa_signature_2048_sha256_test.json")
        var pairs: [Pair] = []
        var wrongLength = 0
        for group in vectors.groups where group["keySize"]!.int64! == 2048 {
            let modulus = Hex.decode(group["publicKey"]!["modulus"]!.string!).drop(while: { $0 == 0 })
            let exponentBytes = Hex.decode(group["publicKey"]!["publicExponent"]!.string!)
            let exponent = exponentBytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let key = try PublicKey(rsaModulus: Array(modulus), exponent: exponentBytes, algorithm: .rs256)
            #expect(RSABatchPower.accepts(key))
            #expect(exponent == 65537 || exponent == 3)
            for test in WycheproofFile.cases(group) {
                guard test.signature.count == 256 else { wrongLength += 1; continue }
                pairs.append(Pair(signature: test.signature, key: key, modulus: Array(modulus), exponent: exponent,
                                  label: "\(test)"))
            }
        }
        let compared = Self.check(pairs, implementation) { _ in 8 }
        #expect(compared == pairs.count)
        #expect(compared + wrongLength == vectors.declaredCount)
        #expect(compared >= 200)
    }

    /// Random signatures and the edge values 0, 1, n−1, n, n+1 and 2^2048−1 over many keys (random odd
    /// moduli, Wycheproof's RSA keys and an e = 3 key that the kernel leaves to libcrypto), lanes mixing
    /// keys, batches of 1 to 8 lanes.
    @Test(arguments: implementations)
    func randomPairs(_ implementation: RSABatchImplementation) throws {
        let count = Int(ProcessInfo.processInfo.environment["IDTK_RSA_BATCH_TEST_COUNT"] ?? "") ?? 3000
        var random = SplitMix64(seed: 0x1F3A_2026)
        var keys: [(PublicKey, [UInt8], UInt64)] = []
        for k in 0..<48 {
            var n = random.bytes(256)
            n[0] |= 0x80
            n[255] |= 1
            if k == 0 { n = [UInt8](repeating: 0xFF, count: 256) }
            if k == 1 { n = [0x80] + [UInt8](repeating: 0, count: 254) + [1] }
            let exponent: UInt64 = k == 2 ? 3 : 65537
            let e: [UInt8] = exponent == 3 ? [3] : [1, 0, 1]
            keys.append((try PublicKey(rsaModulus: n, exponent: e, algorithm: .rs256), n, exponent))
        }
        // Real RSA moduli too: the keys of Wycheproof's RSA-2048 file.
        for group in try WycheproofFile("rsa_signature_2048_sha256_test.json").groups where group["keySize"]!.int64! == 2048 {
            let n = Array(Hex.decode(group["publicKey"]!["modulus"]!.string!).drop(while: { $0 == 0 }))
            keys.append((try PublicKey(rsaModulus: n, exponent: [1, 0, 1], algorithm: .rs256), n, 65537))
        }
        var pairs: [Pair] = []
        for i in 0..<count {
            let (key, n, e) = random.pick(keys)
            var s: [UInt8]
            switch random.below(10) {
            case 0: s = [UInt8](repeating: 0, count: 256)
            case 1: s = [UInt8](repeating: 0, count: 255) + [1]
            case 2: s = Self.add(n, -1)
            case 3: s = n
            case 4: s = Self.add(n, 1)
            case 5: s = [UInt8](repeating: 0xFF, count: 256)
            default: s = random.bytes(256)
            }
            pairs.append(Pair(signature: s, key: key, modulus: n, exponent: e, label: "pair \(i)"))
        }
        var lanes = SplitMix64(seed: 7)
        let compared = Self.check(pairs, implementation) { _ in lanes.chance(1, in: 4) ? 1 + lanes.below(8) : 8 }
        #expect(compared == count)
    }

    /// n + delta for delta = ±1, on 256 big-endian bytes (wrapping at 2^2048, which the moduli here never reach).
    static func add(_ n: [UInt8], _ delta: Int) -> [UInt8] {
        var out = n
        var index = 255
        if delta > 0 {
            while index >= 0 { out[index] &+= 1; if out[index] != 0 { break }; index -= 1 }
        } else {
            while index >= 0 { out[index] &-= 1; if out[index] != 0xFF { break }; index -= 1 }
        }
        return out
    }

    /// Keys the batch path does not take stay on the single-operation path; unset lanes make a run fail.
    @Test func refusals() throws {
        let vectors = try WycheproofFile("rsa_signature_3072_sha256_test.json")
        let group = vectors.groups[0]
        let key3072 = try PublicKey(rsaModulus: Hex.decode(group["publicKey"]!["modulus"]!.string!),
                                    exponent: Hex.decode(group["publicKey"]!["publicExponent"]!.string!))
        #expect(!RSABatchPower.accepts(key3072))
        let batch = try #require(RSABatchPower(implementation: .libcrypto))
        #expect(!batch.set(lane: 0, signature: [UInt8](repeating: 1, count: 384), key: key3072))
        #expect(!batch.run(lanes: 1))
        #expect(!batch.run(lanes: 0) && !batch.run(lanes: 9))
    }
}
