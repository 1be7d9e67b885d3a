import CLibCrypto
import Foundation
@testable import JOSE
import TestSupport
import Testing

/// ``SignatureBatch`` against libcrypto's single check (``CompactJWS/verifySignature(with:)``), token by token, in
/// every implementation this CPU runs: the IFMA kernel when present, and on any CPU its arithmetic as portable C and
/// its eight-lane code emulated, so that the batch path's encoding comparison, lane filling and libcrypto re-check
/// are exercised everywhere.
@Suite struct SignatureBatchTests {
    static let implementations = RSABatchImplementation.allCases.filter(\.isAvailable)

    /// Two RSA-2048 signers (lanes of different keys in one batch) whose moduli leave room for s + n below 2^2048,
    /// an RSA-3072 signer and a P-256 one (both left to libcrypto).
    static let signers: (a: TestSigner, b: TestSigner, large: TestSigner, ec: TestSigner) = {
        func roomy(_ kid: String) -> TestSigner {
            // n below 3·2^2046 (top byte under 0xC0): a third of the signatures or more have s + n < 2^2048.
            while true {
                let signer = TestSigner(.rs256, kid: kid)
                if signer.publicKey.batchKey!.modulusBytes[0] < 0xC0 { return signer }
            }
        }
        return (roomy("a"), roomy("b"), TestSigner(weakRSABits: 3072, kid: "large"), TestSigner(.es256, kid: "ec"))
    }()

    struct Case {
        let label: String
        let jws: CompactJWS
        let key: PublicKey
    }

    /// A token whose signature segment is `signature`, over `signer`'s header and a payload numbered `n`.
    static func token(_ signer: TestSigner, _ n: Int, signature: (([UInt8]) -> [UInt8])? = nil) throws -> CompactJWS {
        let token = signer.token(payload: "{\"sub\":\"user-\(n)\",\"n\":\(n)}")
        guard let signature else { return try CompactJWS(token) }
        let parts = token.split(separator: ".")
        let bytes = Base64URL.decode(parts[2])!
        return try CompactJWS("\(parts[0]).\(parts[1]).\(Base64URL.encode(signature(bytes)))")
    }

    /// Valid tokens of four keys, every byte of one signature corrupted in turn, signatures equal to s + n (which
    /// the kernel would compute as valid, and libcrypto refuses), equal to n, of the wrong length, and ES256 and
    /// RSA-3072 tokens between them.
    static func corpus() throws -> [Case] {
        let (a, b, large, ec) = signers
        var cases: [Case] = []
        for n in 0..<24 {
            let signer = n % 2 == 0 ? a : b
            cases.append(Case(label: "valid \(signer.kid) \(n)", jws: try token(signer, n), key: signer.publicKey))
            if n % 6 == 0 {
                cases.append(Case(label: "es256 \(n)", jws: try token(ec, n), key: ec.publicKey))
                cases.append(Case(label: "rsa3072 \(n)", jws: try token(large, n), key: large.publicKey))
            }
        }
        for position in 0..<256 {
            let jws = try token(a, 1000) { var s = $0; s[position] ^= UInt8(1 << (position % 8)); return s }
            cases.append(Case(label: "signature byte \(position) flipped", jws: jws, key: a.publicKey))
        }
        // The signing input altered, the signature kept: the digest no longer matches.
        let altered = try token(b, 2000)
        let parts = altered.token.split(separator: ".")
        cases.append(Case(label: "payload altered", jws: try CompactJWS("\(parts[0]).\(Base64URL.encode(Array("{\"sub\":\"other\"}".utf8))).\(parts[2])"),
                          key: b.publicKey))
        for (name, signer) in [("a", a), ("b", b)] {
            let modulus = signer.publicKey.batchKey!.modulusBytes
            var wrapped = 0
            for n in 3000..<3060 where wrapped < 4 {
                let valid = try token(signer, n)
                guard let over = Hex.sum(Array(UnsafeBufferPointer(start: valid.signatureStart, count: 256)), modulus) else { continue }
                cases.append(Case(label: "s + n, key \(name)", jws: try token(signer, n) { _ in over }, key: signer.publicKey))
                wrapped += 1
            }
            #expect(wrapped == 4, "key \(name): no signature s with s + n below 2^2048")
            cases.append(Case(label: "s = n, key \(name)", jws: try token(signer, 4000) { _ in modulus }, key: signer.publicKey))
            cases.append(Case(label: "s = 0, key \(name)", jws: try token(signer, 4001) { _ in [UInt8](repeating: 0, count: 256) },
                              key: signer.publicKey))
            cases.append(Case(label: "255 bytes, key \(name)", jws: try token(signer, 4002) { Array($0.dropFirst()) }, key: signer.publicKey))
        }
        // A valid signature checked with the other 2048-bit key: a lane of the wrong key.
        cases.append(Case(label: "key b for a's token", jws: try token(a, 5000), key: b.publicKey))
        return cases
    }

    @Test(arguments: implementations)
    func sameVerdictsAsLibcrypto(_ implementation: RSABatchImplementation) throws {
        let cases = try Self.corpus()
        let expected = cases.map { $0.jws.verifySignature(with: $0.key) }
        let batch = SignatureBatch(implementation: implementation)
        #expect(batch.implementation == implementation)
        // Every lane through the kernel, the last run's few too, so that the counts below are exact.
        batch.minimumKernelLanes = 1
        let verdicts = batch.verify(cases.map { ($0.jws, $0.key) })
        for (k, item) in cases.enumerated() {
            #expect(verdicts[k] == expected[k], "\(implementation): \(item.label): batch \(verdicts[k]), libcrypto \(expected[k])")
        }
        // The valid RS256/2048 tokens went through lanes and were accepted there; of the refused ones, those that
        // took a lane (below the modulus, 256 bytes) were refused by the kernel and checked again by libcrypto.
        let validInLanes = cases.indices.filter { expected[$0] && cases[$0].key.bits == 2048 && cases[$0].key.algorithm == .rs256 }.count
        #expect(expected.filter { $0 }.count == validInLanes + 8)
        #expect(!cases.filter { $0.label.hasPrefix("s + n") }.contains { $0.jws.verifySignature(with: $0.key) })
        if implementation == .libcrypto {
            #expect(batch.kernelAccepted == 0 && batch.kernelRefused == 0)
        } else {
            #expect(batch.kernelAccepted == validInLanes)
            // 256 flipped bytes (some may lift s to n or above: those skip the lanes), the altered payload, s = 0
            // twice and the wrong key.
            #expect(batch.kernelRefused >= 250 && batch.kernelRefused <= 256 + 4)
        }
    }

    /// Runs of fewer than ``SignatureBatch/minimumKernelLanes`` signatures are libcrypto's; four or more take the kernel.
    @Test func fewSignaturesStayOnLibcrypto() throws {
        let (a, b, _, _) = Self.signers
        let tokens = try (0..<4).map { n in (try Self.token(n % 2 == 0 ? a : b, 7000 + n), n % 2 == 0 ? a.publicKey : b.publicKey) }
        for implementation in Self.implementations where implementation != .libcrypto {
            let batch = SignatureBatch(implementation: implementation)
            #expect(batch.minimumKernelLanes == 4)
            #expect(batch.verify(Array(tokens.prefix(3))) == [true, true, true])
            #expect(batch.kernelAccepted == 0)
            #expect(batch.verify(tokens) == [true, true, true, true])
            #expect(batch.kernelAccepted == 4)
        }
    }

    /// Batches of every size from 1 to 17 (lanes left empty, a ninth lane starting a second run) agree too.
    @Test func everyBatchSize() throws {
        let cases = try Self.corpus().filter { !$0.label.hasPrefix("signature byte") || $0.label.hasSuffix(" 7 flipped") }
        for implementation in Self.implementations where implementation != .libcrypto {
            let batch = SignatureBatch(implementation: implementation)
            batch.minimumKernelLanes = 1
            for size in 1...17 {
                let slice = Array(cases.prefix(size))
                #expect(batch.verify(slice.map { ($0.jws, $0.key) }) == slice.map { $0.jws.verifySignature(with: $0.key) },
                        "\(implementation), \(size) tokens")
            }
        }
    }
}
