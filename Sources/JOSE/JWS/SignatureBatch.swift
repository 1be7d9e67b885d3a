#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Verifies the signatures of many split tokens, each with the key its header chose: RS256 signatures under
/// RSA-2048 keys with e = 65537 eight at a time through ``RSABatchPower`` (DESIGN §13), every other one as
/// ``CompactJWS/verifySignature(with:)`` does.
///
/// A lane's result is compared in full with the PKCS#1 v1.5 encoding `00 01 FF…FF 00 ‖ DigestInfo ‖ SHA-256`
/// of the token's own `header.payload` bytes. A signature the batch path refuses is verified again by libcrypto
/// before it is reported bad, and a signature at or above its key's modulus (which libcrypto refuses) never
/// takes a lane: the answers are libcrypto's, whatever the kernel computes. On a CPU without AVX-512 IFMA the
/// implementation is libcrypto, and every signature goes through the single path, with nothing else to pay.
///
/// One instance holds its lanes; it is not for sharing between threads (give each its own).
package final class SignatureBatch {
    /// Nil when the lanes would be computed by libcrypto anyway: the single path is as fast, and exact by definition.
    private let power: RSABatchPower?
    /// How the lanes are computed.
    package var implementation: RSABatchImplementation { power?.implementation ?? .libcrypto }
    /// The expected encodings' common prefix (`00 01 FF…FF 00 ‖ DigestInfo`), then each lane's digest.
    private let digests: UnsafeMutablePointer<UInt8>
    /// Which entry of the caller's list each lane holds.
    private var laneEntries: [Int] = []
    /// How many signatures the kernel accepted, and how many it refused and libcrypto then checked (for tests
    /// and benchmarks).
    package private(set) var kernelAccepted = 0
    package private(set) var kernelRefused = 0
    /// The fewest lanes worth a kernel run: the kernel takes as long for one lane as for eight (about 2.1 libcrypto
    /// verifications on an Intel Xeon, 3.7 on an AMD Zen 4), so a run of fewer signatures (a lone request, a
    /// batch's last few) is verified by libcrypto one at a time.
    package var minimumKernelLanes = 4

    /// SHA-256's DigestInfo prefix (RFC 8017, 9.2).
    static let digestInfo: [UInt8] = [0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
                                      0x02, 0x01, 0x05, 0x00, 0x04, 0x20]
    /// `00 01 FF…FF 00 ‖ DigestInfo`: the 224 bytes every RS256 encoding under a 2048-bit key starts with (the
    /// SHA-256 of the signing input follows).
    package static let encodingPrefix: [UInt8] = {
        let padding = RSABatchPower.signatureLength - 3 - digestInfo.count - 32
        return [0, 1] + [UInt8](repeating: 0xFF, count: padding) + [0] + digestInfo
    }()

    /// A batch computing its lanes with `implementation` (by default IFMA when the CPU has it, see
    /// ``RSABatchImplementation/selected``); libcrypto, or an implementation this CPU does not run: the single path.
    package init(implementation: RSABatchImplementation = .selected) {
        power = implementation == .libcrypto ? nil : RSABatchPower(implementation: implementation)
        digests = .allocate(capacity: RSABatchPower.lanes * 32)
        laneEntries.reserveCapacity(RSABatchPower.lanes)
    }

    deinit { digests.deallocate() }

    /// Whether `jws` and `key` can take a lane: RS256, a 2048-bit key with e = 65537, a signature of 256 bytes
    /// below the modulus.
    @inline(__always)
    private static func takesLane(_ jws: borrowing CompactJWS, _ key: borrowing PublicKey) -> Bool {
        guard key.algorithm == .rs256, let batchKey = key.batchKey, batchKey.constants != nil,
              jws.signatureCount == Int32(RSABatchPower.signatureLength) else { return false }
        return batchKey.modulusBytes.withUnsafeBytes { n in
            memcmp(jws.signatureStart, n.baseAddress!, RSABatchPower.signatureLength) < 0
        }
    }

    /// How a caller hands the batch its i-th token and the key its header chose: `entry(i, use)` calls `use` with
    /// them where they are and returns what `use` returned. Lent, not returned: a token returned as a value is a
    /// copy, which retains and releases each of its references (on a shared key, an atomic operation on a count
    /// every thread uses).
    package typealias Entry = (Int, (borrowing CompactJWS, borrowing PublicKey) -> Bool?) -> Bool?

    /// Verifies the signature of each of `count` tokens, `entry` lending the i-th token and the key its header
    /// chose (the caller has checked the algorithm against its policy and the key against the header, as for
    /// ``CompactJWS/verifySignature(with:)``). Calls `verdict(i, valid)` once for each, in no particular order.
    package func verify(count: Int, entry: Entry, verdict: (Int, Bool) -> Void) {
        guard power != nil else {
            for i in 0..<count {
                verdict(i, Self.verifyAlone(i, entry))
            }
            return
        }
        laneEntries.removeAll(keepingCapacity: true)
        for i in 0..<count {
            if let valid = entry(i, { jws, key in place(i, jws, key) }) { verdict(i, valid) }
            if laneEntries.count == RSABatchPower.lanes { flush(entry: entry, verdict: verdict) }
        }
        if !laneEntries.isEmpty { flush(entry: entry, verdict: verdict) }
    }

    /// The i-th token's signature verified by libcrypto.
    @inline(__always)
    private static func verifyAlone(_ i: Int, _ entry: Entry) -> Bool {
        entry(i) { jws, key in jws.verifySignature(with: key) } ?? false
    }

    /// Gives the i-th token a lane when it can take one (its digest computed) and answers nil; otherwise its
    /// signature verified by libcrypto.
    private func place(_ i: Int, _ jws: borrowing CompactJWS, _ key: borrowing PublicKey) -> Bool? {
        guard let power, Self.takesLane(jws, key) else { return jws.verifySignature(with: key) }
        let lane = laneEntries.count
        let placed = power.set(lane: lane, signature: UnsafeRawBufferPointer(start: jws.signatureStart,
                                                                           count: RSABatchPower.signatureLength), key: key)
        guard placed else { return jws.verifySignature(with: key) }
        let signingInput = jws.secondDot
        jws.withTokenBytes { bytes in
            key.hash(UnsafeRawBufferPointer(start: bytes.baseAddress, count: signingInput),
                     into: UnsafeMutableBufferPointer(start: digests + lane * 32, count: 32))
        }
        laneEntries.append(i)
        return nil
    }

    /// Runs the lanes filled so far and reports each: the encoding compared in full, a mismatch verified again by
    /// libcrypto.
    private func flush(entry: Entry, verdict: (Int, Bool) -> Void) {
        guard laneEntries.count >= minimumKernelLanes else {
            for i in laneEntries {
                verdict(i, Self.verifyAlone(i, entry))
            }
            laneEntries.removeAll(keepingCapacity: true)
            return
        }
        let ran = power!.run(lanes: laneEntries.count)
        Self.encodingPrefix.withUnsafeBytes { prefix in
            for (lane, i) in laneEntries.enumerated() {
                let matches = ran && power!.withResult(lane: lane) { result in
                    memcmp(result.baseAddress!, prefix.baseAddress!, prefix.count) == 0
                        && memcmp(result.baseAddress! + prefix.count, digests + lane * 32, 32) == 0
                }
                if matches {
                    kernelAccepted += 1
                    verdict(i, true)
                } else {
                    // Never reported bad on the kernel's word alone.
                    kernelRefused += 1
                    verdict(i, Self.verifyAlone(i, entry))
                }
            }
        }
        laneEntries.removeAll(keepingCapacity: true)
    }

    /// ``verify(count:entry:verdict:)`` for a list: one answer per token, in order.
    package func verify(_ tokens: [(CompactJWS, PublicKey)]) -> [Bool] {
        var valid = [Bool](repeating: false, count: tokens.count)
        verify(count: tokens.count, entry: { k, use in use(tokens[k].0, tokens[k].1) }, verdict: { valid[$0] = $1 })
        return valid
    }
}

extension CompactJWS {
    /// The decoded signature's first byte (``signatureCount`` of them).
    @inline(__always)
    var signatureStart: UnsafePointer<UInt8> {
        UnsafePointer(header.storage.bytes + Int(header.count) + Int(payloadCount))
    }
}
