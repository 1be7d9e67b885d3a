import IDTokenKit
import JOSE
import TestSupport
import Testing

/// Wycheproof `json_web_signature_test.json`: every compact case through `CompactJWS`, `selectKey` and
/// `verifySignature`, with the algorithm pinned to the group key's own (the policy of a verifier that never
/// takes `alg` from the token).
///
/// A case Wycheproof calls `valid` must be accepted and a case it calls `invalid` must be rejected with
/// `bad_signature`, unless ``expected`` lists it: there every other outcome is written down with the reason,
/// including each deliberate difference from Wycheproof's verdict.
@Suite struct WycheproofJWSTests {
    typealias Expectation = (outcome: Outcome, why: String)

    static let hmac = "HS256 is never accepted: this library verifies tokens signed with a public key, and an HMAC "
        + "header is the key-confusion attack (a public key used as an HMAC secret)"

    /// Every case whose outcome is not simply "valid → accepted" or "invalid → bad_signature".
    static let expected: [Int: Expectation] = {
        var table: [Int: Expectation] = [:]
        func add(_ ids: [Int], _ outcome: Outcome, _ why: String) {
            for id in ids { precondition(table[id] == nil, "tcId \(id) listed twice"); table[id] = (outcome, why) }
        }
        let notAllowed = Outcome.rejected(.algorithmNotAllowed)
        let malformed = Outcome.rejected(.malformed)

        // Deliberate differences: Wycheproof says valid, this library rejects.
        add([1, 348, 352, 357, 358, 359, 376, 377], notAllowed, "DIFFERENCE (valid in Wycheproof): " + hmac)
        add([346, 350], notAllowed, "DIFFERENCE (valid in Wycheproof): RFC 7520 Figure 20 is signed PS384 but the "
            + "group's JWK says \"alg\":\"PS256\"; a key is bound to its JWK's alg, and the header must name it")
        add([347, 351], notAllowed, "DIFFERENCE (valid in Wycheproof): RFC 7520 Figure 27 is ES512 over P-521, "
            + "which is not implemented (no ID token provider uses it); the P-521 key is refused at load as well")
        add([372], malformed, "DIFFERENCE (valid in Wycheproof): a '?' inside the header segment is not base64url; "
            + "every segment must be canonical base64url (RFC 7515 §2, 'no other characters')")
        add([373], notAllowed, "DIFFERENCE (valid in Wycheproof): a '?' inside the payload segment; refused for its "
            + "HS256 header first, and the payload segment would be malformed too (see base64Policy)")

        // Rejections with a code other than bad_signature.
        add([2, 5, 6, 8, 31], notAllowed, hmac)
        add([3], notAllowed, hmac + " (checked before the empty signature)")
        add([16, 341, 342, 343, 344], notAllowed, "\"alg\":\"none\" (any case) is never accepted")
        add([332, 334, 336, 338, 340], notAllowed,
            "the header names RS256/RS384/RS512/PS256/PS384 but the key is bound to PS512")
        add([4, 7, 14, 15, 21, 24, 36, 39], malformed, "not three segments")
        add([9, 11, 26, 28, 41, 43], malformed, "the header segment is empty")
        add([10, 12, 13, 27, 29, 30, 42, 44, 45], malformed, "not three segments (header, payload or all missing)")
        add([17], malformed, "JWS JSON serialization is not supported: ID tokens are compact; one form, one parser")
        add([25, 40], .rejected(.unknownKey), "the modified header names kid \"Xid-…\", which is not in the key set")
        add([353, 354], .rejected(.unknownKey), "the key has \"use\":\"enc\" and is refused at load, so no key matches")
        add([355, 356], .rejected(.unknownKey),
            "the key's \"key_ops\" lacks \"verify\" and it is refused at load, so no key matches")
        add([360, 361, 362, 363, 364], malformed, "the signature segment is not canonical base64url")
        add([365, 366], malformed, "the header segment is not canonical base64url")
        add([367, 368, 369, 370, 371, 374, 375], notAllowed,
            hmac + "; the header is read before the payload, so the base64 defect is checked in base64Policy")
        return table
    }()

    @Test func everyCompactCase() throws {
        let tree = try VectorFiles.json("external/wycheproof/json_web_signature_test.json")
        var ran = 0
        var accepted = 0
        var seen = Set<Int>()
        for group in tree["testGroups"]!.array! {
            let keys = try Self.keys(of: group)
            // Pinned to the algorithms of the group's usable keys. A group without one (HMAC, or a key refused at
            // load) gets every implemented algorithm: the most permissive policy, so the rejection shown does not
            // come from the policy.
            let allowed = keys.isEmpty ? Set(JWSAlgorithm.allCases) : Set(keys.keys.map(\.algorithm))
            for test in group["tests"]!.array! {
                let tcId = Int(test["tcId"]!.int64!)
                let result = test["result"]!.string!
                let token = test["jws"]!.string!
                let outcome = Outcome.ofSignature(token, keys: keys, allowed: allowed)
                let want: Outcome
                if let listed = Self.expected[tcId] {
                    want = listed.outcome
                    seen.insert(tcId)
                } else {
                    #expect(result == "valid" || result == "invalid", "tcId \(tcId): unexpected result \(result)")
                    want = result == "valid" ? .accepted : .rejected(.badSignature)
                }
                #expect(outcome == want, "tcId \(tcId) (\(result), \(test["comment"]!.string!)): \(outcome), expected \(want) — \(Self.expected[tcId]?.why ?? "")")
                // Whatever the table says, nothing Wycheproof calls invalid may ever be accepted.
                if result == "invalid" { #expect(outcome != .accepted, "tcId \(tcId) is invalid but was accepted") }
                if outcome == .accepted { accepted += 1 }
                ran += 1
            }
        }
        #expect(ran == Int(tree["numberOfTests"]!.int64!))
        #expect(ran == 401)
        #expect(seen == Set(Self.expected.keys), "table entries with no case: \(Set(Self.expected.keys).subtracting(seen).sorted())")
        // 46 valid in Wycheproof, minus the 14 listed differences.
        #expect(accepted == 32)
    }

    /// The `base64` group is HS256, so the pipeline refuses it by algorithm before it reaches a malformed
    /// payload. Its real subject is the base64url policy, checked here segment by segment with the decoder the
    /// pipeline uses: a case is well-formed exactly when all three segments are canonical base64url.
    @Test func base64Policy() throws {
        let tree = try VectorFiles.json("external/wycheproof/json_web_signature_test.json")
        let group = try #require(tree["testGroups"]!.array!.first { $0["comment"]?.string == "base64" })
        let differences: [Int: (canonical: Bool, why: String)] = [
            367: (true, "the stored token is byte for byte the valid tcId 357: the padding its name speaks of is not "
                  + "in the file, so its segments are canonical (it is refused only as HS256)"),
            370: (true, "as 367: identical to tcId 357, no padding in the stored payload"),
            372: (false, "DIFFERENCE (valid in Wycheproof): '?' in the header is not base64url; strict decoding refuses it"),
            373: (false, "DIFFERENCE (valid in Wycheproof): '?' in the payload is not base64url; strict decoding refuses it"),
        ]
        let tests = group["tests"]!.array!
        let reference = tests.first { $0["tcId"]?.int64 == 357 }?["jws"]?.string
        #expect(tests.first { $0["tcId"]?.int64 == 367 }?["jws"]?.string == reference)
        #expect(tests.first { $0["tcId"]?.int64 == 370 }?["jws"]?.string == reference)
        var ran = 0
        for test in tests {
            let tcId = Int(test["tcId"]!.int64!)
            let segments = test["jws"]!.string!.split(separator: ".", omittingEmptySubsequences: false)
            #expect(segments.count == 3)
            let canonical = segments.allSatisfy { Base64URL.decode($0) != nil }
            let want = differences[tcId]?.canonical ?? (test["result"]!.string! == "valid")
            #expect(canonical == want, "tcId \(tcId) (\(test["comment"]!.string!)): canonical \(canonical) — \(differences[tcId]?.why ?? "")")
            // The pipeline itself: a non-canonical header or signature is malformed; otherwise HS256 is refused.
            let outcome = Outcome.ofSignature(String(test["jws"]!.string!), keys: .empty, allowed: Set(JWSAlgorithm.allCases))
            let headerOrSignatureBad = Base64URL.decode(segments[0]) == nil || Base64URL.decode(segments[2]) == nil
            #expect(outcome == .rejected(headerOrSignatureBad ? .malformed : .algorithmNotAllowed), "tcId \(tcId)")
            ran += 1
        }
        #expect(ran == 21)
    }

    /// The group's public key (a JWK or a JWKS) as a key set. HMAC groups publish only a `private` symmetric key;
    /// that key is offered to the parser too, which must refuse it, and the verifier holds no key at all.
    static func keys(of group: JSONTree) throws -> JWKSet {
        if let document = group["public"] { return try JWKSet.parse(document.jsonText) }
        let symmetric = try JWKSet.parse(group["private"]!.jsonText)
        #expect(symmetric.isEmpty && symmetric.rejected.count == 1, "a symmetric key was accepted: \(symmetric.kids)")
        return .empty
    }
}
