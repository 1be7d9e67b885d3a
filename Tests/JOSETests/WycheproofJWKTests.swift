import IDTokenKit
import JOSE
import TestSupport
import Testing

/// Wycheproof `json_web_key_test.json`: each group's key set through ``JWKSet/parse(_:)``, then the group's
/// token through the pipeline with the algorithm pinned to the accepted keys' own.
///
/// For every case the table says which keys are kept, which are refused and why, and what happens to the token.
/// Differences from Wycheproof's verdict are marked DIFFERENCE with the reason.
@Suite struct WycheproofJWKTests {
    struct Expectation {
        let kept: [String]
        /// (kid, a fragment of the refusal reason)
        let refused: [(String, String)]
        let outcome: Outcome
        let why: String
    }

    static let symmetric = "symmetric keys are never used"
    static let hmac = "HMAC is never accepted for tokens signed with a public key"

    static let expected: [Int: Expectation] = [
        1: Expectation(kept: ["kid-ec-sign"], refused: [("kid-aes-sign", symmetric)], outcome: .rejected(.algorithmNotAllowed),
                       why: "DIFFERENCE in reason (invalid in Wycheproof, rejected here too): Wycheproof wants a key set that "
                           + "mixes symmetric and asymmetric keys refused whole; here one bad key never sinks the rest of a "
                           + "set, so the symmetric key is refused and the EC key kept. The HS256 token is refused by algorithm."),
        2: Expectation(kept: [], refused: [("kid-aes-sign", symmetric), ("kid-aes-sign-2", symmetric)],
                       outcome: .rejected(.algorithmNotAllowed), why: "DIFFERENCE (valid in Wycheproof): " + hmac),
        3: Expectation(kept: [], refused: [("kid-aes-sign", symmetric), ("kid-aes-sign-2", symmetric)],
                       outcome: .rejected(.algorithmNotAllowed), why: hmac),
        4: Expectation(kept: [], refused: [("kid-aes-sign", symmetric), ("kid-aes-sign", symmetric)],
                       outcome: .rejected(.algorithmNotAllowed),
                       why: "both keys are symmetric (duplicate kids among usable keys: see duplicateKid)"),
        5: Expectation(kept: ["kid-rsa-sign"], refused: [], outcome: .accepted, why: "an RS256 signing key"),
        6: Expectation(kept: [], refused: [("kid-rsa-sign", "\"use\" is \"enc\"")], outcome: .rejected(.unknownKey),
                       why: "an RSA1_5 encryption key is never a verification key"),
        7: Expectation(kept: [], refused: [("kid-rsa-roca-sign", "ROCA")], outcome: .rejected(.unknownKey),
                       why: "a ROCA (CVE-2017-15361) modulus: its private key can be recovered, so it is refused at load"),
        8: Expectation(kept: [], refused: [("RS256_1024", "below the 2048-bit minimum")], outcome: .rejected(.unknownKey),
                       why: "RSA keys under 2048 bits are refused at load"),
        9: Expectation(kept: [], refused: [("RS256_2048", "exponent must be odd and at least 3")], outcome: .rejected(.unknownKey),
                       why: "public exponent 1 makes every 'signature' equal its message"),
        10: Expectation(kept: [], refused: [("short_hs256_key", symmetric)], outcome: .rejected(.algorithmNotAllowed), why: hmac),
        11: Expectation(kept: [], refused: [("short_hs384_key", symmetric)], outcome: .rejected(.algorithmNotAllowed), why: hmac),
        12: Expectation(kept: [], refused: [("short_hs512_key", symmetric)], outcome: .rejected(.algorithmNotAllowed), why: hmac),
        13: Expectation(kept: [], refused: [("long_hs256_key", symmetric)], outcome: .rejected(.algorithmNotAllowed),
                        why: "DIFFERENCE (valid in Wycheproof): " + hmac),
        14: Expectation(kept: [], refused: [("long_hs384_key", symmetric)], outcome: .rejected(.algorithmNotAllowed),
                        why: "DIFFERENCE (valid in Wycheproof): " + hmac),
        15: Expectation(kept: [], refused: [("long_hs512_key", symmetric)], outcome: .rejected(.algorithmNotAllowed),
                        why: "DIFFERENCE (valid in Wycheproof): " + hmac),
        16: Expectation(kept: [], refused: [("hs256_key", symmetric)], outcome: .rejected(.algorithmNotAllowed), why: hmac),
        17: Expectation(kept: [], refused: [("hs384_key", symmetric)], outcome: .rejected(.algorithmNotAllowed), why: hmac),
        18: Expectation(kept: [], refused: [("hs512_key", symmetric)], outcome: .rejected(.algorithmNotAllowed), why: hmac),
        19: Expectation(kept: [], refused: [("kid-ec-sign", "unsupported \"alg\" \"ES521\"")], outcome: .rejected(.unknownKey),
                        why: "a P-256 key that claims ES521: the alg is unknown here, so the key is refused rather than guessed"),
        20: Expectation(kept: [], refused: [("kid-ec-sign", "unsupported \"alg\" \"ES224\"")], outcome: .rejected(.unknownKey),
                        why: "ES224 is not a JWS algorithm"),
        21: Expectation(kept: [], refused: [("kid-ec-sign", "\"use\" is \"enc\"")], outcome: .rejected(.unknownKey),
                        why: "an encryption key is never a verification key"),
        22: Expectation(kept: [], refused: [("kid-ec-sign", "not on P-256")], outcome: .rejected(.unknownKey),
                        why: "the point is not on the curve (invalid-curve attacks start here)"),
        23: Expectation(kept: [], refused: [("kid-ec-sign", "does not fit a P-384 key")], outcome: .rejected(.unknownKey),
                        why: "crv P-384 with alg ES256 and 32-byte coordinates"),
        24: Expectation(kept: [], refused: [("kid-ec-sign", "\"n\" is missing")], outcome: .rejected(.unknownKey),
                        why: "kty RSA with EC members"),
        25: Expectation(kept: [], refused: [("kid-aes-sign", symmetric)], outcome: .rejected(.algorithmNotAllowed),
                        why: "an AES key; the token is HS256"),
        26: Expectation(kept: [], refused: [("kid-aes-sign", symmetric)], outcome: .rejected(.algorithmNotAllowed),
                        why: "an AES key wrap key; the token is HS256"),
    ]

    @Test func everyCase() throws {
        let tree = try VectorFiles.json("external/wycheproof/json_web_key_test.json")
        var ran = 0
        for group in tree["testGroups"]!.array! {
            // Groups with only symmetric keys publish them as `private`; the parser sees whatever there is.
            let document = group["public"] ?? group["private"]!
            let set = try JWKSet.parse(document.jsonText)
            let allowed = set.isEmpty ? Set(JWSAlgorithm.allCases) : Set(set.keys.map(\.algorithm))
            for test in group["tests"]!.array! {
                let tcId = Int(test["tcId"]!.int64!)
                let result = test["result"]!.string!
                let want = try #require(Self.expected[tcId], "tcId \(tcId) has no expectation")
                let context = "tcId \(tcId) (\(group["comment"]!.string!), \(result)): \(want.why)"
                #expect(set.kids == want.kept, "\(context)")
                #expect(set.rejected.count == want.refused.count, "\(context): \(set.rejected)")
                for (rejected, (kid, fragment)) in zip(set.rejected, want.refused) {
                    #expect(rejected.kid == kid && rejected.reason.contains(fragment), "\(context): \(rejected)")
                }
                let outcome = Outcome.ofSignature(test["jws"]!.string!, keys: set, allowed: allowed)
                #expect(outcome == want.outcome, "\(context): \(outcome)")
                if result == "invalid" { #expect(outcome != .accepted, "\(context): invalid but accepted") }
                ran += 1
            }
        }
        #expect(ran == Int(tree["numberOfTests"]!.int64!))
        #expect(ran == Self.expected.count)
    }

    /// A kid that names two different keys is ambiguous: both are refused, and a token naming it finds no key.
    /// The same key listed twice is one key. Built from two RS256 keys of the Wycheproof files.
    @Test func duplicateKid() throws {
        let jwkTests = try VectorFiles.json("external/wycheproof/json_web_key_test.json")
        let jwsTests = try VectorFiles.json("external/wycheproof/json_web_signature_test.json")
        let first = try #require(jwkTests["testGroups"]!.array!.first { $0["comment"]?.string == "rs256" }?["public"]?["keys"]?.array?.first)
        let firstToken = try #require(jwkTests["testGroups"]!.array!.first { $0["comment"]?.string == "rs256" }?["tests"]?.array?.first?["jws"]?.string)
        // The RS256 group of the JWS file whose key has kid "RS256_2048"; renamed to collide with the first key.
        let other = try #require(jwsTests["testGroups"]!.array!.first { $0["public"]?["kid"]?.string == "RS256_2048" }?["public"])
        guard case .object(let members) = other else { Issue.record("not an object"); return }
        let renamed = JSONTree.object(members.map { $0.key == "kid" ? (key: "kid", value: .string("kid-rsa-sign")) : $0 })

        let ambiguous = try JWKSet.parse("{\"keys\":[\(first.jsonText),\(renamed.jsonText)]}")
        #expect(ambiguous.isEmpty)
        #expect(ambiguous.rejected.map(\.kid) == ["kid-rsa-sign", "kid-rsa-sign"])
        #expect(ambiguous.rejected.allSatisfy { $0.reason.contains("more than one key") })
        #expect(Outcome.ofSignature(firstToken, keys: ambiguous, allowed: [.rs256]) == .rejected(.unknownKey))

        let repeated = try JWKSet.parse("{\"keys\":[\(first.jsonText),\(first.jsonText)]}")
        #expect(repeated.kids == ["kid-rsa-sign"])
        #expect(repeated.rejected.isEmpty)
        #expect(Outcome.ofSignature(firstToken, keys: repeated, allowed: [.rs256]) == .accepted)

        // One bad key never sinks the rest: a symmetric key and a 1024-bit key beside the good one.
        let mixed = try JWKSet.parse("""
            {"keys":[{"kty":"oct","kid":"h","k":"AAAA"},\(first.jsonText),{"kty":"RSA","kid":"small","n":"\(Base64URL.encode([0xC1] + [UInt8](repeating: 0x5B, count: 127)))","e":"AQAB"}]}
            """)
        #expect(mixed.kids == ["kid-rsa-sign"])
        #expect(mixed.rejected.map(\.kid) == ["h", "small"])
        #expect(Outcome.ofSignature(firstToken, keys: mixed, allowed: [.rs256]) == .accepted)
    }
}
