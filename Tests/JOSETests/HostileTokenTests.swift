import Foundation
import JOSE
import TestSupport
import Testing

/// Hostile and malformed tokens, each with the code it must be rejected with and why; none may crash.
///
/// Tokens that must get past the signature (hostile payloads, odd but well-signed headers) are signed with keys
/// generated for the run, so that the check under test is really the one that refuses them.
@Suite struct HostileTokenTests {
    struct Case: CustomStringConvertible {
        let name: String
        let token: String
        let expected: Outcome
        let why: String
        var limits: JWSLimits = .default
        var description: String { name }
    }

    static let rsa = TestSigner(.rs256, kid: "rsa-1")
    static let ec = TestSigner(.es256, kid: "ec-1")
    static let attacker = TestSigner(.es256, kid: "ec-1")
    static let keys = JWKSet(keys: [rsa.publicKey, ec.publicKey])
    static let allowed: Set<JWSAlgorithm> = [.rs256, .es256]

    static func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }
    static func b64(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }

    static let rsaHeader = "{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}"
    static let ecHeader = "{\"alg\":\"ES256\",\"kid\":\"ec-1\"}"
    static let claims = "{\"sub\":\"1234567890\",\"iat\":1516239022}"

    /// A token whose `header.payload` is exactly as given and whose signature is `signature`.
    static func token(_ header: String, _ payload: String, _ signature: [UInt8]) -> String {
        b64(header) + "." + b64(payload) + "." + b64(signature)
    }

    /// Sets the unused low bits of a segment's last character (the segment must not be a multiple of 4 long).
    static func withUnusedBitsSet(_ segment: Substring) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        precondition(segment.count % 4 != 0, "a segment a multiple of 4 long has no unused bits")
        var characters = Array(segment)
        let value = alphabet.firstIndex(of: characters.last!)!
        characters[characters.count - 1] = alphabet[value | 1]
        return String(characters)
    }

    /// The P-256 group order n, big-endian.
    static let p256Order = Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    static let cases: [Case] = {
        var cases: [Case] = []
        func add(_ name: String, _ token: String, _ expected: Outcome, _ why: String, limits: JWSLimits = .default) {
            cases.append(Case(name: name, token: token, expected: expected, why: why, limits: limits))
        }
        let good = rsa.token(header: Array(rsaHeader.utf8), payload: Array(claims.utf8))
        let goodEC = ec.token(header: Array(ecHeader.utf8), payload: Array(claims.utf8))
        let parts = good.split(separator: ".", omittingEmptySubsequences: false)
        let ecParts = goodEC.split(separator: ".", omittingEmptySubsequences: false)
        let rsaSignature = Base64URL.decode(parts[2])!
        let ecSignature = Base64URL.decode(ecParts[2])!
        let ecSigningInput = Array((ecParts[0] + "." + ecParts[1]).utf8)
        let ecPrefix = String(ecParts[0] + "." + ecParts[1] + ".")
        let notAllowed = Outcome.rejected(.algorithmNotAllowed)
        let malformed = Outcome.rejected(.malformed)
        let badSignature = Outcome.rejected(.badSignature)

        // Controls: the unmodified tokens verify, so every rejection below is caused by its one change.
        add("control RS256", good, .accepted, "a well-formed RS256 token")
        add("control ES256", goodEC, .accepted, "a well-formed ES256 token")

        // Algorithms.
        for alg in ["none", "None", "NONE", "nOnE"] {
            add("alg \(alg), empty signature", b64("{\"alg\":\"\(alg)\",\"kid\":\"rsa-1\"}") + "." + parts[1] + ".", notAllowed,
                "unsigned tokens are never accepted, in any spelling")
        }
        add("alg none with the RS256 signature", b64("{\"alg\":\"none\",\"kid\":\"rsa-1\"}") + "." + parts[1] + "." + parts[2],
            notAllowed, "none is refused before any signature is looked at")
        add("alg missing", token("{\"kid\":\"rsa-1\"}", claims, rsaSignature), notAllowed, "the algorithm must be named")
        add("alg not a string", token("{\"alg\":256,\"kid\":\"rsa-1\"}", claims, rsaSignature), notAllowed, "alg must be a string")
        add("alg empty", token("{\"alg\":\"\",\"kid\":\"rsa-1\"}", claims, rsaSignature), notAllowed, "an empty alg names nothing")
        add("alg with an escape", token("{\"alg\":\"RS\\u0032256\",\"kid\":\"rsa-1\"}", claims, rsaSignature), notAllowed,
            "alg is matched on its exact bytes; \"RS\\u0032256\" is not an implemented name")
        do {
            // HS256 with the RSA public key (SubjectPublicKeyInfo PEM) as the HMAC secret: the key-confusion attack.
            let header = b64("{\"alg\":\"HS256\",\"kid\":\"rsa-1\"}") + "." + b64(claims)
            let secret = Array(rsa.publicKeyPEM.utf8)
            add("HS256 header against an RSA key", header + "." + b64(hmacSHA256(key: secret, Array(header.utf8))), notAllowed,
                "HMAC is never accepted for public-key tokens, so a public key can never act as an HMAC secret")
        }
        add("RS384 header, policy RS256/ES256", rsa.token(header: Array("{\"alg\":\"RS384\",\"kid\":\"rsa-1\"}".utf8),
                                                          payload: Array(claims.utf8)), notAllowed,
            "an implemented algorithm that the policy does not list")
        add("RS256 header naming the EC key", rsa.token(header: Array("{\"alg\":\"RS256\",\"kid\":\"ec-1\"}".utf8),
                                                        payload: Array(claims.utf8)), notAllowed,
            "the key named by kid is bound to ES256; the header cannot choose another algorithm for it")
        add("ES256 header naming the RSA key", ec.token(header: Array("{\"alg\":\"ES256\",\"kid\":\"rsa-1\"}".utf8),
                                                        payload: Array(claims.utf8)), notAllowed, "as above, the other way round")

        // Keys are never taken from the token.
        add("embedded jwk of the attacker", attacker.token(
                header: Array("{\"alg\":\"ES256\",\"kid\":\"ec-1\",\"jwk\":{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"\",\"y\":\"\"},\"jku\":\"https://attacker.example/jwks\",\"x5u\":\"https://attacker.example/cert\"}".utf8),
                payload: Array(claims.utf8)), badSignature,
            "jwk/jku/x5u are never used; the kid selects the real key, which did not sign this")
        add("kid unknown", rsa.token(header: Array("{\"alg\":\"RS256\",\"kid\":\"nobody\"}".utf8), payload: Array(claims.utf8)),
            .rejected(.unknownKey), "no key has this kid")
        add("kid missing", rsa.token(header: Array("{\"alg\":\"RS256\"}".utf8), payload: Array(claims.utf8)),
            .rejected(.unknownKey), "kid is required and the set has two keys")
        add("kid not a string", rsa.token(header: Array("{\"alg\":\"RS256\",\"kid\":1}".utf8), payload: Array(claims.utf8)),
            .rejected(.unknownKey), "kid must be a string")
        add("crit header", rsa.token(header: Array("{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"crit\":[\"exp\"],\"exp\":1}".utf8),
                                     payload: Array(claims.utf8)), .rejected(.unsupportedHeader),
            "no critical extension is understood, so a token that demands one is refused (RFC 7515 §4.1.11)")
        add("crit empty", rsa.token(header: Array("{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"crit\":[]}".utf8),
                                    payload: Array(claims.utf8)), .rejected(.unsupportedHeader), "crit must not be present at all")

        // Shape.
        add("empty token", "", malformed, "not a compact JWS")
        add("one segment", String(parts[0]), malformed, "one segment")
        add("two segments", parts[0] + "." + parts[1], malformed, "two segments")
        add("four segments", good + "." + parts[2], malformed, "four segments")
        add("four segments, last empty", good + ".", malformed, "a trailing dot makes four")
        add("only dots", "..", malformed, "an empty header segment")
        add("empty header segment", "." + parts[1] + "." + parts[2], malformed, "an empty header segment")
        add("empty signature", parts[0] + "." + parts[1] + ".", badSignature, "an RS256 token without a signature")
        add("JSON serialization", "{\"payload\":\"\(parts[1])\",\"protected\":\"\(parts[0])\",\"signature\":\"\(parts[2])\"}",
            malformed, "only the compact serialization is read")

        // Base64url.
        for (segment, index) in [("header", 0), ("payload", 1), ("signature", 2)] {
            var padded = parts.map(String.init)
            padded[index] += padded[index].count % 4 == 2 ? "==" : "="
            add("padding in the \(segment)", padded.joined(separator: "."), malformed, "'=' padding is not base64url in JWS")
            var spaced = parts.map(String.init)
            spaced[index].insert(" ", at: spaced[index].index(spaced[index].startIndex, offsetBy: 4))
            add("space in the \(segment)", spaced.joined(separator: "."), malformed, "whitespace is not base64url")
            var plus = parts.map(String.init)
            plus[index] = String(plus[index].prefix(4)) + "+" + String(plus[index].dropFirst(5))
            add("'+' in the \(segment)", plus.joined(separator: "."), malformed, "standard base64's '+' is not base64url")
            var slash = parts.map(String.init)
            slash[index] = String(slash[index].prefix(4)) + "/" + String(slash[index].dropFirst(5))
            add("'/' in the \(segment)", slash.joined(separator: "."), malformed, "standard base64's '/' is not base64url")
            var bits = parts.map(String.init)
            bits[index] = withUnusedBitsSet(parts[index])
            add("non-canonical trailing bits in the \(segment)", bits.joined(separator: "."), malformed,
                "every byte string has one encoding; a set unused bit is a second one")
        }
        add("leading space", " " + good, malformed, "whitespace around the token is not stripped")
        add("trailing newline", good + "\n", malformed, "whitespace around the token is not stripped")
        add("trailing CRLF", good + "\r\n", malformed, "whitespace around the token is not stripped")
        add("tab inside", parts[0] + ".\t" + parts[1] + "." + parts[2], malformed, "whitespace is not base64url")
        add("NUL byte", parts[0] + "." + parts[1] + "\u{0}." + parts[2], malformed, "NUL is not base64url")
        add("non-ASCII character", parts[0] + "." + parts[1] + "é." + parts[2], malformed, "non-ASCII is not base64url")
        add("Bearer prefix", "Bearer " + good, malformed, "the caller strips the scheme; the token must be exact")

        // The header as JSON.
        add("header duplicate alg", token("{\"alg\":\"RS256\",\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", claims, rsaSignature),
            malformed, "duplicate members are refused, even with equal values")
        add("header duplicate alg, none then RS256", token("{\"alg\":\"none\",\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", claims, rsaSignature),
            malformed, "parsers that keep the first or the last member would disagree about the algorithm")
        add("header duplicate kid, one escaped", token("{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"\\u006bid\":\"ec-1\"}", claims, rsaSignature),
            malformed, "member names are compared after unescaping")
        add("header is an array", token("[\"RS256\"]", claims, rsaSignature), malformed, "the header must be an object")
        add("header is null", token("null", claims, rsaSignature), malformed, "the header must be an object")
        add("header with a BOM", token("\u{FEFF}" + rsaHeader, claims, rsaSignature), malformed, "a byte-order mark is not JSON")
        add("header with trailing data", token(rsaHeader + "x", claims, rsaSignature), malformed, "one value only")
        add("header with a NUL escape", token("{\"alg\":\"RS256\",\"kid\":\"rsa-1\\u0000\"}", claims, rsaSignature), malformed,
            "\\u0000 is refused (as Jansson does without JSON_ALLOW_NUL)")
        add("header with invalid UTF-8", b64(Array("{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"x\":\"".utf8) + [0xC0, 0x80] + Array("\"}".utf8))
                + "." + parts[1] + "." + parts[2], malformed, "an overlong encoding of NUL is invalid UTF-8")
        add("header with a lone surrogate", token("{\"alg\":\"RS256\",\"kid\":\"\\ud800\"}", claims, rsaSignature), malformed,
            "a lone surrogate is not a Unicode scalar")

        // The payload, under a signature that verifies: the claims step is what refuses these.
        func signed(_ payload: [UInt8]) -> String { rsa.token(header: Array(rsaHeader.utf8), payload: payload) }
        func signed(_ payload: String) -> String { signed(Array(payload.utf8)) }
        add("payload duplicate member", signed("{\"sub\":\"a\",\"sub\":\"b\"}"), malformed, "duplicate claims are refused")
        add("payload duplicate member, one escaped", signed("{\"sub\":\"a\",\"\\u0073ub\":\"b\"}"), malformed,
            "\"sub\" and \"\\u0073ub\" are the same name")
        add("payload nested duplicate member", signed("{\"firebase\":{\"tenant\":\"a\",\"tenant\":\"b\"}}"), malformed,
            "duplicates are refused at any depth")
        add("payload invalid UTF-8 (lone continuation byte)", signed(Array("{\"sub\":\"".utf8) + [0x80] + Array("\"}".utf8)),
            malformed, "invalid UTF-8")
        add("payload invalid UTF-8 (encoded surrogate)", signed(Array("{\"sub\":\"".utf8) + [0xED, 0xA0, 0x80] + Array("\"}".utf8)),
            malformed, "UTF-8 must not encode surrogates")
        add("payload invalid UTF-8 (above U+10FFFF)", signed(Array("{\"sub\":\"".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("\"}".utf8)),
            malformed, "no scalar above U+10FFFF")
        add("payload invalid UTF-8 (truncated sequence)", signed(Array("{\"sub\":\"".utf8) + [0xE2, 0x82] + Array("\"}".utf8)),
            malformed, "a three-byte sequence cut short")
        add("payload lone surrogate escape", signed("{\"sub\":\"\\udc00\"}"), malformed, "a lone low surrogate")
        add("payload NUL escape", signed("{\"sub\":\"a\\u0000b\"}"), malformed, "\\u0000 would let two strings compare equal in C")
        add("payload integer overflow", signed("{\"exp\":9223372036854775808}"), malformed, "an integer outside Int64")
        add("payload real overflow", signed("{\"exp\":1e309}"), malformed, "a real that overflows")
        add("payload is an array", signed("[1]"), malformed, "the claims must be an object")
        add("payload is a string", signed("\"claims\""), malformed, "the claims must be an object")
        add("payload is empty", signed(""), malformed, "no JSON at all")
        add("payload trailing garbage", signed(claims + "}"), malformed, "one value only")
        add("payload changed after signing", parts[0] + "." + b64("{\"sub\":\"admin\",\"iat\":1516239022}") + "." + parts[2],
            badSignature, "the signature covers the payload")

        // ECDSA signatures: exactly 64 raw bytes, r and s in [1, n−1].
        let r = Array(ecSignature[..<32]), s = Array(ecSignature[32...])
        add("ES256 signature of 63 bytes", ecPrefix + b64(Array(ecSignature.dropLast())), badSignature, "r‖s is exactly 64 bytes")
        add("ES256 signature of 65 bytes", ecPrefix + b64(ecSignature + [0]), badSignature, "r‖s is exactly 64 bytes")
        add("ES256 signature with a leading zero", ecPrefix + b64([0] + ecSignature), badSignature, "r‖s is exactly 64 bytes")
        add("ES256 signature DER-encoded", ecPrefix + b64(ec.libcryptoSignature(ecSigningInput)), badSignature,
            "JWS uses raw r‖s, not DER (RFC 7518 §3.4); a valid DER signature of the same input is refused")
        add("ES256 signature empty", ecPrefix, badSignature, "no signature")
        add("ES256 r = 0", ecPrefix + b64([UInt8](repeating: 0, count: 32) + s), badSignature, "r must be at least 1")
        add("ES256 s = 0", ecPrefix + b64(r + [UInt8](repeating: 0, count: 32)), badSignature, "s must be at least 1")
        add("ES256 r = s = 0", ecPrefix + b64([UInt8](repeating: 0, count: 64)), badSignature, "the all-zero signature")
        add("ES256 r = n", ecPrefix + b64(p256Order + s), badSignature, "r must be below n")
        add("ES256 s = n", ecPrefix + b64(r + p256Order), badSignature, "s must be below n")
        add("ES256 r = n + 1", ecPrefix + b64(addOrder([UInt8](repeating: 0, count: 31) + [1]) + s), badSignature,
            "n + 1 is congruent to 1 but out of range; reducing it instead of refusing it would accept r = 1")
        add("ES256 r and s swapped", ecPrefix + b64(s + r), badSignature, "a different signature")
        add("ES256 all 0xFF", ecPrefix + b64([UInt8](repeating: 0xFF, count: 64)), badSignature, "r, s above n")

        // RSA signatures: exactly the modulus length.
        add("RS256 signature one byte short", parts[0] + "." + parts[1] + "." + b64(Array(rsaSignature.dropLast())), badSignature,
            "an RSA-2048 signature is exactly 256 bytes")
        add("RS256 signature one byte long", parts[0] + "." + parts[1] + "." + b64(rsaSignature + [0]), badSignature,
            "an RSA-2048 signature is exactly 256 bytes")
        add("RS256 signature with a leading zero byte", parts[0] + "." + parts[1] + "." + b64([0] + rsaSignature), badSignature,
            "the same integer, but not the I2OSP encoding of the modulus length")
        add("RS256 signature all zero", parts[0] + "." + parts[1] + "." + b64([UInt8](repeating: 0, count: 256)), badSignature,
            "signature 0")
        add("RS256 signature of the EC key's length", parts[0] + "." + parts[1] + "." + b64(ecSignature), badSignature,
            "64 bytes for a 256-byte modulus")
        return cases
    }()

    /// r + n as 32 bytes (r must be small enough for the sum to fit).
    static func addOrder(_ r: [UInt8]) -> [UInt8] { Hex.sum(r, p256Order)! }

    @Test func everyCaseHasItsCode() throws {
        // The key-confusion case uses the RSA key's real PEM text as its HMAC secret.
        #expect(try PublicKey(pem: Self.rsa.publicKeyPEM).thumbprint == Self.rsa.publicKey.thumbprint)
        var names = Set<String>()
        for c in Self.cases {
            #expect(names.insert(c.name).inserted, "duplicate case name \(c.name)")
            let outcome = Outcome.ofVerification(c.token, keys: Self.keys, allowed: Self.allowed, limits: c.limits)
            #expect(outcome == c.expected, "\(c.name): \(outcome), expected \(c.expected) — \(c.why)")
        }
        #expect(Self.cases.filter { $0.expected == .accepted }.map(\.name) == ["control RS256", "control ES256"])
    }

    /// A 10 MB token is refused for its size before anything else is done with it, in a time that does not
    /// depend on its contents (the size check is O(1) on a native string).
    @Test func tenMegabyteToken() {
        let payload = "{\"sub\":\"" + String(repeating: "a", count: 10 * 1024 * 1024) + "\"}"
        let token = Self.rsa.token(payload: payload)
        #expect(token.utf8.count > 10_000_000)
        let clock = ContinuousClock()
        var outcome = Outcome.accepted
        // The fastest of five runs: a run that other suites deschedule must not decide.
        let elapsed = (0..<5).map { _ in
            clock.measure {
                for _ in 0..<100 { outcome = Outcome.ofVerification(token, keys: Self.keys, allowed: Self.allowed) }
            }
        }.min()!
        #expect(outcome == .rejected(.tokenTooLarge))
        // 100 refusals of a 10 MB token take microseconds; reading it 100 times would take over a second.
        #expect(elapsed < .milliseconds(250), "\(elapsed)")
        // With the limit raised, the same token is read and verifies: the size was the only objection.
        #expect(Outcome.ofVerification(token, keys: Self.keys, allowed: Self.allowed,
                                       limits: JWSLimits(maxTokenBytes: 16 * 1024 * 1024)) == .accepted)
    }

    /// 100,000 nested arrays (or objects) in a signed payload or in the header: refused as too large by default;
    /// with the size limit raised, refused by the depth cap; and with the depth limit raised too, refused by the
    /// reader's fixed ceiling. Never a stack overflow.
    @Test(arguments: [("arrays", "[", "]"), ("objects", "{\"a\":", "}")])
    func deepNesting(_ shape: (name: String, open: String, close: String)) {
        let nested = String(repeating: shape.open, count: 100_000) + "1" + String(repeating: shape.close, count: 100_000)
        let payloadToken = Self.rsa.token(payload: "{\"sub\":\"a\",\"deep\":" + nested + "}")
        let headerToken = Self.rsa.token(header: Array("{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"deep\":\(nested)}".utf8),
                                         payload: Array(Self.claims.utf8))
        let big = JWSLimits(maxTokenBytes: 64 * 1024 * 1024)
        let unlimited = JWSLimits(maxTokenBytes: 64 * 1024 * 1024, maxDepth: .max)
        for token in [payloadToken, headerToken] {
            #expect(Outcome.ofVerification(token, keys: Self.keys, allowed: Self.allowed) == .rejected(.tokenTooLarge), "\(shape.name)")
            #expect(Outcome.ofVerification(token, keys: Self.keys, allowed: Self.allowed, limits: big) == .rejected(.malformed),
                    "\(shape.name): the default depth cap")
            #expect(Outcome.ofVerification(token, keys: Self.keys, allowed: Self.allowed, limits: unlimited) == .rejected(.malformed),
                    "\(shape.name): the reader's ceiling")
        }
        // The claims themselves, read directly with any limit.
        let document = Array(("{\"deep\":" + nested + "}").utf8)
        for limit in [32, JSONObject.depthCeiling, 1_000_000, Int.max] {
            #expect(throws: JSONSyntaxError.self, "\(shape.name), maxDepth \(limit)") { try JSONObject.parse(document, maxDepth: limit) }
        }
    }

    /// The depth limit counts levels exactly, as Jansson does: every value is a level, scalars included, and the
    /// top-level object is level 1.
    @Test func depthLimitIsExact() throws {
        /// A document whose deepest value (the scalar 1) is at `level`.
        func document(deepestValueAt level: Int) -> String {
            "{\"a\":" + String(repeating: "[", count: level - 2) + "1" + String(repeating: "]", count: level - 2) + "}"
        }
        #expect(throws: Never.self) { try JSONObject.parse("{}", maxDepth: 1) }
        #expect(throws: JSONSyntaxError.self) { try JSONObject.parse("{\"a\":1}", maxDepth: 1) }
        #expect(throws: Never.self) { try JSONObject.parse("{\"a\":[]}", maxDepth: 2) }
        #expect(throws: JSONSyntaxError.self) { try JSONObject.parse("{\"a\":[1]}", maxDepth: 2) }
        for limit in [2, 3, 32, JSONObject.depthCeiling] {
            #expect(throws: Never.self, "limit \(limit)") { try JSONObject.parse(document(deepestValueAt: limit), maxDepth: limit) }
            #expect(throws: JSONSyntaxError.self, "limit \(limit)") {
                try JSONObject.parse(document(deepestValueAt: limit + 1), maxDepth: limit)
            }
        }
        // Above the ceiling a larger limit changes nothing.
        let deeper = document(deepestValueAt: JSONObject.depthCeiling + 1)
        #expect(throws: JSONSyntaxError.self) { try JSONObject.parse(deeper, maxDepth: 4 * JSONObject.depthCeiling) }
        // The default limit leaves ordinary claims alone: Firebase nests four levels.
        let firebase = "{\"firebase\":{\"identities\":{\"apple.com\":[\"001234.abcd\"]},\"sign_in_provider\":\"apple.com\"}}"
        #expect(throws: Never.self) { try JSONObject.parse(firebase) }
    }
}
