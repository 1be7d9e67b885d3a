import Foundation
import IDTokenKit
import Testing

/// ``MultiProfileVerifier/evaluate(batch:)`` against ``MultiProfileVerifier/evaluate(_:at:nonce:profile:)`` token by
/// token: every generated vector that has a key set (replay cases aside: a replay cache is stateful), grouped by
/// profile and keys, each group verified as one batch in every implementation of the signature lanes this CPU runs
/// (the IFMA kernel when present; its portable and emulated forms on any CPU). The outcomes must be the same:
/// verdict, code, claim, message, how far the token got, the profile and the claims read.
@Suite struct BatchVerificationTests {
    struct Group {
        let verifier: MultiProfileVerifier
        let entries: [MultiProfileVerifier.BatchEntry]
        let ids: [String]
    }

    static func groups() throws -> [Group] {
        var order: [String] = []
        var byKey: [String: (profile: JSONTree, keys: JSONTree, cases: [JSONTree])] = [:]
        for test in GeneratedVectorTests.cases {
            let c = test.json
            guard let keys = c["keys"], keys != .null, c["replay"] == nil, let profile = c["profile"] else { continue }
            let key = "\(profile)|\(keys)"
            if byKey[key] == nil { order.append(key); byKey[key] = (profile, keys, []) }
            byKey[key]!.cases.append(c)
        }
        return try order.map { key in
            let group = byKey[key]!
            let verifier = MultiProfileVerifier(try IDTokenVerifier(profile: try VectorProfile.make(group.profile),
                                                                    keys: try VectorFiles.keySet(group.keys)))
            return Group(verifier: verifier,
                         entries: group.cases.map { c in
                             MultiProfileVerifier.BatchEntry(token: c["token"]!.string!, at: Double(c["at"]!.int64!),
                                                             nonce: VectorProfile.nonce(c["nonce"]))
                         },
                         ids: group.cases.map { $0["id"]?.string ?? "?" })
        }
    }

    static func same(_ a: ProfileVerification, _ b: ProfileVerification) -> Bool {
        a.error == b.error && a.error?.message == b.error?.message && a.signatureVerified == b.signatureVerified
            && a.profile == b.profile && a.claims?.rawJSON == b.claims?.rawJSON
            && a.verifiedToken?.claims.object.rawJSON == b.verifiedToken?.claims.object.rawJSON
    }

    @Test(arguments: RSABatchImplementation.allCases.filter(\.isAvailable))
    func batchAgreesWithSingle(_ implementation: RSABatchImplementation) throws {
        let groups = try Self.groups()
        #expect(groups.map(\.entries.count).reduce(0, +) >= 400)
        let signatures = SignatureBatch(implementation: implementation)
        // Every RS256/2048 signature through the kernel, a group's last few too.
        signatures.minimumKernelLanes = 1
        var accepted = 0
        for group in groups {
            let batch = group.verifier.evaluate(batch: group.entries, signatures: signatures)
            #expect(batch.count == group.entries.count)
            for (k, entry) in group.entries.enumerated() {
                let single = group.verifier.evaluate(entry.token, at: entry.at, nonce: entry.nonce)
                #expect(Self.same(batch[k], single),
                        "\(implementation) \(group.ids[k]): batch \(batch[k].error?.description ?? "valid"), single \(single.error?.description ?? "valid")")
                if single.error == nil { accepted += 1 }
            }
        }
        #expect(accepted >= 50)
        if implementation != .libcrypto {
            // The RS256 vectors with 2048-bit keys took lanes: the accepted ones there, the altered ones refused and
            // checked again by libcrypto.
            #expect(signatures.kernelAccepted >= 30)
            #expect(signatures.kernelRefused >= 5)
        }
    }

    /// A replica of the verifier (``MultiProfileVerifier/replica()``, an audit worker's own) judges every vector as
    /// the verifier itself does, single and in batches (its keys' batch constants made again: the kernel takes the
    /// same lanes), over key objects of its own that hold the same keys.
    @Test(arguments: RSABatchImplementation.allCases.filter(\.isAvailable))
    func replicaAgreesWithOriginal(_ implementation: RSABatchImplementation) throws {
        let signatures = SignatureBatch(implementation: implementation)
        signatures.minimumKernelLanes = 1
        var compared = 0
        for group in try Self.groups() {
            let replica = group.verifier.replica()
            let batch = replica.evaluate(batch: group.entries, signatures: signatures)
            for (k, entry) in group.entries.enumerated() {
                let original = group.verifier.evaluate(entry.token, at: entry.at, nonce: entry.nonce)
                let single = replica.evaluate(entry.token, at: entry.at, nonce: entry.nonce)
                #expect(Self.same(single, original) && Self.same(batch[k], original),
                        "\(group.ids[k]): original \(original.error?.description ?? "valid"), replica \(single.error?.description ?? "valid"), in a batch \(batch[k].error?.description ?? "valid")")
                compared += 1
            }
            let keys = try #require(group.verifier.members[0].verifier.keySource.currentKeys())
            let replicaKeys = try #require(replica.members[0].verifier.keySource.currentKeys())
            #expect(replicaKeys.keys.count == keys.keys.count && replicaKeys.rejected == keys.rejected)
            for (mine, theirs) in zip(replicaKeys.keys, keys.keys) {
                #expect(mine !== theirs)
                #expect(mine.kid == theirs.kid && mine.thumbprint == theirs.thumbprint && mine.algorithm == theirs.algorithm)
            }
            #expect(replica.members.map(\.name) == group.verifier.members.map(\.name))
            #expect(replica.members[0].verifier.profile.issuers == group.verifier.members[0].verifier.profile.issuers)
        }
        #expect(compared >= 400)
        if implementation != .libcrypto { #expect(signatures.kernelAccepted >= 30) }
    }

    /// The audit's way in: each token lent as bytes (``TokenBytes``, split from a copy of them) instead of text, the
    /// group as one batch. Every outcome must be the text's, and so must an accepted token's replay key.
    @Test func bytesAgreeWithText() throws {
        var accepted = 0
        for group in try Self.groups() {
            var outcomes = [ProfileVerification?](repeating: nil, count: group.entries.count)
            let lent = group.entries.map { Array($0.token.utf8) }
            group.verifier.evaluate(count: group.entries.count, signatures: SignatureBatch(), prepared: { k in
                lent[k].withUnsafeBytes { bytes in
                    group.verifier.prepare(TokenBytes(bytes), now: group.entries[k].at, nonce: group.entries[k].nonce,
                                           profile: nil, reportsRefusals: true)
                }
            }) { k, outcome in outcomes[k] = outcome }
            for (k, entry) in group.entries.enumerated() {
                let text = group.verifier.evaluate(entry.token, at: entry.at, nonce: entry.nonce)
                let bytes = try #require(outcomes[k], "\(group.ids[k]): no outcome")
                #expect(Self.same(bytes, text),
                        "\(group.ids[k]): bytes \(bytes.error?.description ?? "valid"), text \(text.error?.description ?? "valid")")
                #expect(bytes.payloadRange == text.payloadRange, "\(group.ids[k])")
                #expect(bytes.verifiedToken?.kid == text.verifiedToken?.kid, "\(group.ids[k])")
                if text.error == nil {
                    accepted += 1
                    #expect(bytes.replayEntry(ofBytes: lent[k][...]) == text.replayEntry(of: entry.token), "\(group.ids[k])")
                }
                // One at a time, as the audit judges a token another worker held.
                let alone = lent[k].withUnsafeBytes { bytes in
                    group.verifier.step(TokenBytes(bytes), now: entry.at, nonce: entry.nonce, profile: nil, reportsRefusals: true).now()
                }
                #expect(Self.same(alone, text), "\(group.ids[k]) alone")
            }
        }
        #expect(accepted >= 50)
    }
}
