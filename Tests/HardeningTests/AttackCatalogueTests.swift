import Foundation
import IDTokenKit
import TestSupport
import Testing

/// The catalogue of known attacks on JWT verifiers, each through the real verifier with a provider profile and
/// the DESIGN §3 code it must be refused with (or, for the controls and the lawful oddities, accepted).
///
/// Tokens are signed at test time (libcrypto, see TestSigner). A token that must reach a check after the
/// signature is signed with the provider's own key, so that the check under test is the one that refuses it;
/// a token "signed by the attacker" is signed with a key the key set never holds. Attacks on the header and the
/// signature run against every provider; claim attacks against the providers whose rules they concern.
@Suite struct AttackCatalogueTests {
    struct Attack: CustomStringConvertible, Sendable {
        let name: String
        let provider: Fixtures.Provider
        let token: String
        let expected: Outcome
        let why: String
        var keys: JWKSet = Fixtures.keys
        var description: String { "\(provider.rawValue): \(name)" }
    }

    typealias P = Fixtures.Provider

    static let allowedAlg = Outcome.rejected(.algorithmNotAllowed)
    static let badSignature = Outcome.rejected(.badSignature)
    static let malformed = Outcome.rejected(.malformed)
    static let unknownKey = Outcome.rejected(.unknownKey)
    static let invalidClaim = Outcome.rejected(.invalidClaim)

    /// The P-256 group order n, big-endian.
    static let p256Order = Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    static let cases: [Attack] = {
        var cases: [Attack] = []
        func add(_ provider: P, _ name: String, _ token: String, _ expected: Outcome, _ why: String, keys: JWKSet = Fixtures.keys) {
            cases.append(Attack(name: name, provider: provider, token: token, expected: expected, why: why, keys: keys))
        }
        for provider in P.allCases { headerAndSignatureAttacks(provider, add) }
        ecdsaAttacks(add)
        claimAttacks(add)
        keySetAttacks(add)
        return cases
    }()

    typealias Add = (P, String, String, Outcome, String, JWKSet) -> Void

    // MARK: Header, key choice and signature — every provider

    static func headerAndSignatureAttacks(_ p: P, _ record: Add) {
        func add(_ name: String, _ token: String, _ expected: Outcome, _ why: String) { record(p, name, token, expected, why, Fixtures.keys) }
        let claims = Fixtures.claims(p).json
        let rsa = Fixtures.rsa
        let good = Fixtures.token(p)
        let goodParts = good.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let rsaSignature = Base64URL.decode(goodParts[2])!
        let signingInput = goodParts[0] + "." + goodParts[1]

        add("control: a valid RS256 token", good, .accepted, "the unmodified token verifies, so each rejection below is caused by its one change")

        // alg none, in the spellings libraries have lowercased or not.
        for alg in ["none", "None", "NONE", "nOnE"] {
            add("alg \(alg), empty signature", Fixtures.assemble(Fixtures.header(alg: alg), claims, []),
                allowedAlg, "an unsigned token is never accepted, whatever the case of \"none\"")
        }
        add("alg none with the real signature attached", Fixtures.assemble(Fixtures.header(alg: "none"), claims, rsaSignature),
            allowedAlg, "the algorithm comes from the profile, so a valid-looking signature does not rescue \"none\"")
        add("alg missing", Fixtures.assemble(Fixtures.header(alg: nil), claims, rsaSignature), allowedAlg, "no algorithm, no verification")
        add("alg not a string", Fixtures.assemble(#"{"alg":["RS256"],"kid":"rsa-1"}"#, claims, rsaSignature), allowedAlg,
            "an array naming RS256 is not RS256")
        add("alg PS256 over an RS256 key", rsa.token(header: Fixtures.header(alg: "PS256"), payload: claims), allowedAlg,
            "PS256 is not in the profile's list")

        // HMAC with the provider's public key as the secret (the classic key-confusion attack).
        for (form, secret) in [("PEM", Array(rsa.publicKeyPEM.utf8)), ("DER", rsa.spki),
                               ("JWK", Array(rsa.jwk(kid: "rsa-1").utf8))] {
            for alg in ["HS256", "HS512"] {
                let header = Fixtures.header(alg: alg)
                let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
                add("\(alg) keyed with the public key (\(form))", input + "." + Base64URL.encode(hmacSHA256(key: secret, Array(input.utf8))),
                    allowedAlg, "HMAC is never accepted for a provider that signs with a private key")
            }
        }

        // RS256 ↔ ES256 swaps and kids that point at a key of the other type.
        let ecTokenOnRSAKid = Fixtures.ec.token(header: Fixtures.header(alg: "ES256", kid: "rsa-1"), payload: claims)
        add("ES256 header with the RSA key's kid", ecTokenOnRSAKid, allowedAlg,
            p == .oidc ? "the key named is an RSA key, which cannot verify ES256" : "the profile allows only RS256")
        add("RS256 header with the EC key's kid, RSA-signed", rsa.token(header: Fixtures.header(alg: "RS256", kid: "ec-1"), payload: claims),
            allowedAlg, "the kid points at a P-256 key, which cannot verify RS256")
        add("RS256 header with the EC key's kid, EC-signed", Fixtures.ec.token(header: Fixtures.header(alg: "RS256", kid: "ec-1"), payload: claims),
            allowedAlg, "the header's alg is checked against the key's type, whatever signed the token")
        add("ES256 header and EC kid over an RSA signature", Fixtures.assemble(Fixtures.header(alg: "ES256", kid: "ec-1"), claims, rsaSignature),
            p == .oidc ? badSignature : allowedAlg,
            p == .oidc ? "a 256-byte signature is not a 64-byte r‖s" : "the profile allows only RS256")
        add("RS256 header over a 64-byte ECDSA signature",
            Fixtures.assemble(Fixtures.header(), claims, Fixtures.ec.sign(Array(signingInput.utf8))), badSignature,
            "an RSA-2048 signature is 256 bytes")

        // The signature itself.
        add("empty signature", signingInput + ".", badSignature, "no signature, no token")
        add("signature of another token", Fixtures.assemble(Fixtures.header(), Fixtures.claims(p).with("sub", "\"admin\"").json, rsaSignature),
            badSignature, "the signature covers the received header and payload")
        add("signed by the attacker under the provider's kid", Fixtures.token(p, signer: Fixtures.attackerRSA), badSignature,
            "a kid is a name, not a key")
        add("RSA signature one byte short", Fixtures.assemble(Fixtures.header(), claims, Array(rsaSignature.dropLast())), badSignature,
            "an RSA signature has exactly the modulus length")
        add("RSA signature one byte long (zero appended)", Fixtures.assemble(Fixtures.header(), claims, rsaSignature + [0]), badSignature,
            "an RSA signature has exactly the modulus length")
        add("RSA signature one byte long (zero prepended)", Fixtures.assemble(Fixtures.header(), claims, [0] + rsaSignature), badSignature,
            "an RSA signature has exactly the modulus length, even when the extra byte does not change its value")
        let (zeroLed, zeroLedSignature) = leadingZeroSignature(p)
        add("control: an RSA signature whose first byte is zero", zeroLed, .accepted, "a signature that starts with 0x00 is still 256 bytes")
        add("RSA signature with its leading zero stripped",
            zeroLed[..<zeroLed.lastIndex(of: ".")!] + "." + Base64URL.encode(Array(zeroLedSignature.dropFirst())), badSignature,
            "the same integer in 255 bytes is not a valid encoding (RFC 8017 I2OSP)")

        // kid values that are attacks on whatever looks the kid up.
        for (label, kid) in [("path traversal", "../../../../../../etc/passwd"), ("path traversal to a key file", "../keys/rsa-1"),
                             ("SQL injection", "' OR '1'='1' --"), ("SQL injection after the real kid", "rsa-1' OR 1=1 --"),
                             ("the real kid with a trailing space", "rsa-1 "), ("the real kid in capitals", "RSA-1"),
                             ("10 KB", String(repeating: "k", count: 10 * 1024))] {
            add("kid: \(label)", rsa.token(header: Fixtures.header(kid: kid), payload: claims), unknownKey,
                "the kid is matched byte for byte against the key set and nothing else")
        }
        add("kid with an escaped NUL", rsa.token(header: #"{"alg":"RS256","kid":"rsa-1\u0000"}"#, payload: claims), malformed,
            "\\u0000 is refused in every JSON string, so a C-string lookup can never be cut short")
        add("kid with a raw NUL byte", rsa.token(header: Array(#"{"alg":"RS256","kid":"rsa-1"#.utf8) + [0] + Array(#""}"#.utf8), payload: Array(claims.utf8)),
            malformed, "control characters are not allowed raw in JSON strings")
        add("kid a number", rsa.token(header: #"{"alg":"RS256","kid":1}"#, payload: claims), unknownKey, "a kid must be a string")
        add("kid null", rsa.token(header: #"{"alg":"RS256","kid":null}"#, payload: claims), unknownKey, "a kid must be a string")
        add("kid missing", rsa.token(header: Fixtures.header(kid: nil), payload: claims), unknownKey,
            p == .oidc ? "without a kid only a one-key set has a key to use; this set has two" : "the provider always names its key")

        // Headers that carry or point to keys: never used. Each token is signed by the attacker's key.
        let attacker = Fixtures.attackerRSA
        let attackerJWK = attacker.jwk(kid: "attacker-1")
        let attackerDER = Data(attacker.spki).base64EncodedString()
        for (label, member) in [("jwk", "\"jwk\":\(attackerJWK)"), ("jku", #""jku":"https://attacker.example/jwks.json""#),
                                ("x5u", #""x5u":"https://attacker.example/cert.pem""#), ("x5c", "\"x5c\":[\"\(attackerDER)\"]")] {
            add("embedded \(label) naming the attacker's key, provider's kid",
                attacker.token(header: Fixtures.header(kid: "rsa-1", member), payload: claims), badSignature,
                "the key comes from the key set by kid; \(label) is never read")
            add("embedded \(label) naming the attacker's key, attacker's kid",
                attacker.token(header: Fixtures.header(kid: "attacker-1", member), payload: claims), unknownKey,
                "the attacker's kid is not in the key set, whatever the header carries")
            add("embedded \(label) naming the attacker's key, no kid",
                attacker.token(header: Fixtures.header(kid: nil, member), payload: claims), unknownKey,
                "a key carried by the token is never a substitute for a kid")
        }

        // crit: no extension is understood, so any crit is refused.
        for (label, extra) in [("naming exp", #""crit":["exp"],"exp":1"#), ("empty", #""crit":[]"#),
                               ("b64 false (RFC 7797)", #""crit":["b64"],"b64":false"#), ("not an array", #""crit":"exp""#)] {
            add("crit \(label)", rsa.token(header: Fixtures.header(extra), payload: claims), .rejected(.unsupportedHeader),
                "a critical extension the verifier does not implement must make it refuse the token (RFC 7515 §4.1.11)")
        }

        // Duplicate members: the token must mean one thing to every reader.
        add("duplicate alg (RS256 then none)", rsa.token(header: #"{"alg":"RS256","alg":"none","kid":"rsa-1"}"#, payload: claims),
            malformed, "readers that keep the first and the last member would disagree")
        add("duplicate alg (none then RS256)", rsa.token(header: #"{"alg":"none","alg":"RS256","kid":"rsa-1"}"#, payload: claims),
            malformed, "readers that keep the first and the last member would disagree")
        add("duplicate kid", rsa.token(header: #"{"alg":"RS256","kid":"rsa-1","kid":"ec-1"}"#, payload: claims), malformed,
            "readers that keep the first and the last member would disagree")
        let base = Fixtures.claims(p)
        for (name, second) in [("iss", Fixtures.quoted("https://attacker.example")), ("aud", Fixtures.quoted("attacker-app")),
                               ("sub", Fixtures.quoted("admin")), ("exp", "\(Fixtures.now + 86_400 * 365)")] {
            var claims = base
            claims.append(name, second)
            add("duplicate \(name)", Fixtures.token(p, claims: claims), malformed,
                "a second \(name) would be read by some libraries and not others")
        }
        var escapedDuplicate = base
        escapedDuplicate.append(nameJSON: #""\u0065xp""#, "\(Fixtures.now + 86_400 * 365)")
        add("duplicate exp spelt with an escape", Fixtures.token(p, claims: escapedDuplicate), malformed,
            "\"\\u0065xp\" is the member name \"exp\"")

        // Shape: whatever a transport may add around a token.
        add("trailing dot", good + ".", malformed, "a compact JWS has exactly two dots")
        add("two trailing dots", good + "..", malformed, "a compact JWS has exactly two dots")
        add("leading dot", "." + good, malformed, "a compact JWS has exactly two dots")
        add("byte-order mark", "\u{FEFF}" + good, malformed, "a BOM is not base64url")
        for (label, text) in [("leading space", " " + good), ("trailing space", good + " "), ("trailing newline", good + "\n"),
                              ("trailing CRLF", good + "\r\n"), ("tab inside", good.replacingOccurrences(of: ".", with: ".\t")),
                              ("space after the first dot", goodParts[0] + ". " + goodParts[1] + "." + goodParts[2]),
                              ("Bearer prefix", "Bearer " + good)] {
            add("whitespace: \(label)", text, malformed, "base64url has no whitespace; the caller trims, the verifier does not guess")
        }
        add("padded signature", good + "==", malformed, "base64url in JWS has no padding")
        let standard = Data(rsaSignature).base64EncodedString().replacingOccurrences(of: "=", with: "")
        precondition(standard.contains("+") || standard.contains("/"), "a 256-byte signature without '+' or '/' in base64")
        add("signature in the standard base64 alphabet", signingInput + "." + standard, malformed, "'+' and '/' are not base64url")
        add("over the size cap", rsa.token(header: Fixtures.header(), payload: Fixtures.claims(p).with("pad", Fixtures.quoted(String(repeating: "x", count: 16 * 1024))).json),
            .rejected(.tokenTooLarge), "tokens over 16 KiB are refused before any work")
    }

    /// A token for `provider` whose RSA signature starts with a zero byte (found by varying a claim), and that
    /// signature.
    static func leadingZeroSignature(_ provider: P) -> (String, [UInt8]) {
        for attempt in 0..<20_000 {
            let token = Fixtures.token(provider, claims: Fixtures.claims(provider).with("attempt", "\(attempt)"))
            let signature = Base64URL.decode(token[token.index(after: token.lastIndex(of: ".")!)...])!
            if signature[0] == 0 { return (token, signature) }
        }
        preconditionFailure("no RSA signature with a leading zero in 20,000 attempts")
    }

    // MARK: ECDSA (the OIDC profile, the one that allows ES256)

    static func ecdsaAttacks(_ add: Add) {
        let claims = Fixtures.claims(.oidc).json
        let header = Fixtures.header(alg: "ES256", kid: "ec-1")
        let good = Fixtures.ec.token(header: header, payload: claims)
        let parts = good.split(separator: ".").map(String.init)
        let signingInput = Array((parts[0] + "." + parts[1]).utf8)
        let signature = Base64URL.decode(parts[2])!
        let r = Array(signature.prefix(32)), s = Array(signature.suffix(32))
        let zero = [UInt8](repeating: 0, count: 32)
        let n = p256Order
        let allOnes = [UInt8](repeating: 0xFF, count: 32)
        func with(_ r: [UInt8], _ s: [UInt8]) -> String { Fixtures.assemble(header, claims, r + s) }
        add(.oidc, "control: a valid ES256 token", good, .accepted, "the unmodified token verifies", Fixtures.keys)
        for (label, forged) in [("r = 0", with(zero, s)), ("s = 0", with(r, zero)), ("r = s = 0", with(zero, zero)),
                                ("r = n", with(n, s)), ("s = n", with(r, n)), ("r = 2^256 - 1", with(allOnes, s)),
                                ("s = 2^256 - 1", with(r, allOnes)), ("r = s = n", with(n, n))] {
            add(.oidc, "ECDSA \(label)", forged, badSignature, "r and s must lie in [1, n-1]", Fixtures.keys)
        }
        add(.oidc, "ES256 signature DER-encoded", Fixtures.assemble(header, claims, Fixtures.ec.libcryptoSignature(signingInput)),
            badSignature, "JWS ES256 signatures are the 64-byte r‖s, never DER", Fixtures.keys)
        add(.oidc, "ES256 signature 63 bytes", Fixtures.assemble(header, claims, Array(signature.dropLast())), badSignature,
            "r‖s is exactly 64 bytes", Fixtures.keys)
        add(.oidc, "ES256 signature 65 bytes", Fixtures.assemble(header, claims, [0] + signature), badSignature,
            "r‖s is exactly 64 bytes", Fixtures.keys)
        add(.oidc, "ES256 signed by the attacker under the provider's kid", Fixtures.attackerEC.token(header: header, payload: claims),
            badSignature, "a kid is a name, not a key", Fixtures.keys)
    }

    // MARK: Claims

    static func claimAttacks(_ record: Add) {
        func token(_ p: P, _ claims: Members) -> String { Fixtures.token(p, claims: claims) }
        for p in P.allCases {
            let base = Fixtures.claims(p)
            func add(_ name: String, _ claims: Members, _ expected: Outcome, _ why: String) {
                record(p, name, token(p, claims), expected, why, Fixtures.keys)
            }
            let now = Fixtures.now
            for claim in ["exp", "iat"] {
                let original = base[claim]!
                add("\(claim) as a string of digits", base.with(claim, "\"\(original)\""), invalidClaim, "a NumericDate is a JSON number")
                add("\(claim) as a negative number", base.with(claim, "-1"), invalidClaim, "no token is dated before 1970")
                add("\(claim) as 1e300", base.with(claim, "1e300"), invalidClaim, "no token is dated after the year 9999")
                add("\(claim) as 1e400 (overflows a double)", base.with(claim, "1e400"), malformed, "the claims are refused as JSON before any rule")
                add("\(claim) as NaN", base.with(claim, "NaN"), malformed, "NaN is not JSON")
                add("\(claim) as Infinity", base.with(claim, "Infinity"), malformed, "Infinity is not JSON")
                add("\(claim) as true", base.with(claim, "true"), invalidClaim, "a NumericDate is a JSON number")
                add("\(claim) as null", base.with(claim, "null"), invalidClaim, "a NumericDate is a JSON number")
            }
            add("exp as a fraction", base.with("exp", "\(now + 3600).5"), .accepted, "a NumericDate may have a fraction (RFC 7519 §2)")
            add("iat as a fraction", base.with("iat", "\(now - 60).25"), .accepted, "a NumericDate may have a fraction (RFC 7519 §2)")
            add("exp as a fraction in the past", base.with("exp", "\(now - 3600).5"), .rejected(.expired), "fractions are compared like integers")
            add("exp as an exponent", base.with("exp", "1.7672292e9"), .accepted, "1.7672292e9 is a NumericDate like any other")
            add("iat just past the leeway", base.with("iat", "\(now + 61)"), .rejected(.issuedInFuture), "the leeway is 60 s")
            add("exp missing", base.with("exp", nil), invalidClaim, "exp is required by every provider")

            // aud in shapes no provider issues.
            let audience = base["aud"]!
            add("aud an empty array", base.with("aud", "[]"), .rejected(.wrongAudience),
                p == .oidc ? "an empty audience list names no one" : "this provider issues aud as a single string")
            add("aud a nested array", base.with("aud", "[[\(audience)]]"),
                p == .oidc ? invalidClaim : .rejected(.wrongAudience),
                p == .oidc ? "aud array elements must be strings" : "this provider issues aud as a single string")
            add("aud an object", base.with("aud", "{\(audience):true}"), invalidClaim, "aud is a string or an array of strings")
            add("aud a number", base.with("aud", "4242"), invalidClaim, "aud is a string or an array of strings")
            add("aud an array holding the audience", base.with("aud", "[\"someone-else\",\(audience)]"),
                p == .oidc ? .accepted : .rejected(.wrongAudience),
                p == .oidc ? "OIDC allows an array that contains the client ID" : "this provider issues aud as a single string")
            add("iss with a trailing slash", base.with("iss", String(base["iss"]!.dropLast()) + "/\""), .rejected(.wrongIssuer),
                "issuers are compared exactly")
        }

        // Firebase: sub is 1 to 128 characters (Unicode scalars).
        let firebase = Fixtures.claims(.firebase)
        func sub(_ text: String) -> Members { firebase.with("sub", Fixtures.quoted(text)) }
        for (label, subject, expected) in [
            ("128 ASCII characters", String(repeating: "a", count: 128), Outcome.accepted),
            ("129 ASCII characters", String(repeating: "a", count: 129), invalidClaim),
            ("128 two-byte characters (é)", String(repeating: "é", count: 128), .accepted),
            ("129 two-byte characters (é)", String(repeating: "é", count: 129), invalidClaim),
            ("128 four-byte characters (😀, 256 UTF-16 units)", String(repeating: "😀", count: 128), .accepted),
            ("129 four-byte characters (😀)", String(repeating: "😀", count: 129), invalidClaim),
            ("64 e + combining acute (128 scalars)", String(repeating: "e\u{301}", count: 64), .accepted),
            ("65 e + combining acute (130 scalars, 65 graphemes)", String(repeating: "e\u{301}", count: 65), invalidClaim),
            ("empty", "", invalidClaim),
        ] {
            record(.firebase, "sub of \(label)", token(.firebase, sub(subject)), expected,
                "a Firebase uid is 1 to 128 characters, counted as Unicode scalars", Fixtures.keys)
        }
        let escaped = String(repeating: "\\u00e9", count: 128)
        record(.firebase, "sub of 128 escaped characters (\\u00e9)", token(.firebase, firebase.with("sub", "\"\(escaped)\"")), .accepted,
            "escapes are counted as the characters they stand for", Fixtures.keys)
        record(.firebase, "sub of 129 escaped characters (\\u00e9)", token(.firebase, firebase.with("sub", "\"\(escaped)\\u00e9\"")), invalidClaim,
            "escapes are counted as the characters they stand for", Fixtures.keys)
        record(.firebase, "sub a number", token(.firebase, firebase.with("sub", "1234")), invalidClaim, "sub is a string", Fixtures.keys)

        // Apple: the booleans it writes as strings, real_user_status, email; checked in one walk, and any member
        // not in its usual form judged again one claim at a time.
        let apple = Fixtures.claims(.apple)
        for (label, name, value, expected) in [
            ("email_verified the string \"true\"", "email_verified", #""true""#, Outcome.accepted),
            ("email_verified the string \"false\"", "email_verified", #""false""#, .accepted),
            ("email_verified \"\\u0074rue\" (escaped)", "email_verified", #""\u0074rue""#, .accepted),
            ("email_verified \"TRUE\"", "email_verified", #""TRUE""#, invalidClaim),
            ("email_verified 1", "email_verified", "1", invalidClaim),
            ("is_private_email false", "is_private_email", "false", .accepted),
            ("is_private_email \"yes\"", "is_private_email", #""yes""#, invalidClaim),
            ("nonce_supported \"true\"", "nonce_supported", #""true""#, .accepted),
            ("nonce_supported null", "nonce_supported", "null", invalidClaim),
            ("real_user_status 0", "real_user_status", "0", .accepted),
            ("real_user_status 2", "real_user_status", "2", .accepted),
            ("real_user_status -0", "real_user_status", "-0", .accepted),
            ("real_user_status 3", "real_user_status", "3", invalidClaim),
            ("real_user_status 10", "real_user_status", "10", invalidClaim),
            ("real_user_status 1.0", "real_user_status", "1.0", invalidClaim),
            ("real_user_status \"1\"", "real_user_status", #""1""#, invalidClaim),
            ("email a number", "email", "7", invalidClaim),
        ] {
            record(.apple, "\(label)", token(.apple, apple.with(name, value)), expected,
                "Apple's booleans may be strings; real_user_status is 0, 1 or 2; email is a string", Fixtures.keys)
        }

        // Firebase: the shape of the `firebase` claim, each member checked whatever its position.
        let identities = #""identities":{"email":["a@example.com"]}"#
        for (label, object, expected) in [
            ("a string", #""password""#, invalidClaim),
            ("an empty object", "{}", Outcome.accepted),
            ("with every member well-formed, and others", #"{"x":1,"sign_in_provider":"password","tenant":"t-1","sign_in_second_factor":"phone",\#(identities),"y":[{}]}"#, .accepted),
            ("sign_in_provider a number", #"{\#(identities),"sign_in_provider":7}"#, invalidClaim),
            ("sign_in_provider null", #"{"sign_in_provider":null,\#(identities)}"#, invalidClaim),
            ("tenant a number", #"{"sign_in_provider":"password","tenant":7}"#, invalidClaim),
            ("sign_in_second_factor true", #"{"sign_in_second_factor":true,"sign_in_provider":"password"}"#, invalidClaim),
            ("identities a string", #"{"sign_in_provider":"password","identities":"email"}"#, invalidClaim),
            ("identities an array", #"{"identities":[],"sign_in_provider":"password"}"#, invalidClaim),
            ("identities null", #"{"identities":null}"#, invalidClaim),
            ("an escaped member name (\\u0074enant) a number", #"{"\u0074enant":7}"#, invalidClaim),
        ] {
            record(.firebase, "firebase \(label)", token(.firebase, firebase.with("firebase", object)), expected,
                "firebase is an object whose sign_in_provider, tenant and sign_in_second_factor are strings and identities an object",
                Fixtures.keys)
        }
    }

    // MARK: Key sets

    static func keySetAttacks(_ add: Add) {
        let rsa = Fixtures.rsa
        let claims = Fixtures.claims(.oidc)
        func set(_ jwks: [String]) -> JWKSet { try! JWKSet.parse("{\"keys\":[" + jwks.joined(separator: ",") + "]}") }

        // The same kid for two different keys: neither is used.
        let ambiguous = set([rsa.jwk(kid: "rsa-1"), Fixtures.attackerRSA.jwk(kid: "rsa-1")])
        add(.oidc, "JWKS: kid naming two keys, token by the provider", Fixtures.token(.oidc, claims: claims), unknownKey,
            "an ambiguous kid is refused rather than resolved in anyone's favour", ambiguous)
        add(.oidc, "JWKS: kid naming two keys, token by the attacker", Fixtures.token(.oidc, claims: claims, signer: Fixtures.attackerRSA),
            unknownKey, "an ambiguous kid is refused rather than resolved in anyone's favour", ambiguous)
        add(.oidc, "JWKS: the same key listed twice under its kid", Fixtures.token(.oidc, claims: claims), .accepted,
            "a key repeated verbatim is not ambiguous", set([rsa.jwk(kid: "rsa-1"), rsa.jwk(kid: "rsa-1")]))

        // A 1024-bit RSA key: refused at load.
        let weak = TestSigner(weakRSABits: 1024, kid: "weak-1024")
        let weakSet = set([weak.jwk(kid: "weak-1024"), Fixtures.ec.jwk(kid: "ec-1")])
        for p in [P.firebase, .oidc] {
            add(p, "JWKS: a 1024-bit RSA key", weak.token(header: Fixtures.header(kid: "weak-1024"), payload: Fixtures.claims(p).json), unknownKey,
                "RSA keys under 2048 bits are refused when the set is loaded", weakSet)
        }

        // EC keys whose point is not on P-256.
        let ecJWK = try! JSONTree.parse(Fixtures.ec.jwk(kid: "ec-bad"))
        let x = Base64URL.decode(ecJWK["x"]!.string!)!, y = Base64URL.decode(ecJWK["y"]!.string!)!
        var yPlusOne = y
        yPlusOne[31] = yPlusOne[31] &+ 1
        let p256Prime = Hex.decode("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
        for (label, px, py) in [("y + 1", x, yPlusOne), ("(0, 0)", [UInt8](repeating: 0, count: 32), [UInt8](repeating: 0, count: 32)),
                                ("x = p", p256Prime, y), ("y and x swapped", y, x)] {
            let jwk = "{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"ec-bad\",\"x\":\"\(Base64URL.encode(px))\",\"y\":\"\(Base64URL.encode(py))\"}"
            add(.oidc, "JWKS: EC key off the curve, \(label)",
                Fixtures.ec.token(header: Fixtures.header(alg: "ES256", kid: "ec-bad"), payload: claims.json), unknownKey,
                "a point not on the curve is refused at load (invalid-curve attacks)", set([jwk, rsa.jwk(kid: "rsa-1")]))
        }
    }

    // MARK: Running the catalogue

    @Test(arguments: cases)
    func attack(_ attack: Attack) {
        let verifier = Fixtures.verifier(attack.provider)
        do {
            _ = try verifier.verify(attack.token, keys: attack.keys, now: Fixtures.nowDate)
            #expect(attack.expected == .accepted, "accepted; expected \(attack.expected): \(attack.why)")
        } catch {
            #expect(Outcome.rejected(error.code) == attack.expected, "\(error.code.rawValue): \(error.message); expected \(attack.expected): \(attack.why)")
            #expect(!error.message.isEmpty)
        }
    }

    /// The catalogue covers what it says: every provider, every code it names.
    @Test func catalogueCoverage() {
        #expect(Set(Self.cases.map(\.provider)) == Set(P.allCases))
        let codes = Set(Self.cases.compactMap { if case .rejected(let code) = $0.expected { code } else { nil } })
        let expected: Set<TokenError.Code> = [.malformed, .tokenTooLarge, .algorithmNotAllowed, .unsupportedHeader, .unknownKey,
                                              .badSignature, .expired, .issuedInFuture, .wrongIssuer, .wrongAudience, .invalidClaim]
        #expect(codes == expected)
        #expect(Self.cases.count > 250)
    }

    /// A key set of 10,000 keys loads in time linear in its size, and finding a key in it costs no more than a
    /// verification does.
    @Test func tenThousandKeys() throws {
        let rsa = Fixtures.rsa
        // One modulus under 10,000 kids (a key set may list a key under several names), then the signing key.
        let filler = Fixtures.attackerRSA.jwk(kid: "KID")
        func keySet(_ count: Int) -> String {
            var jwks = (0..<count).map { filler.replacingOccurrences(of: "\"KID\"", with: "\"k\($0)\"") }
            jwks.append(rsa.jwk(kid: "rsa-1"))
            return "{\"keys\":[" + jwks.joined(separator: ",") + "]}"
        }
        let (tenThousand, oneThousand) = (keySet(10_000), keySet(1_000))
        let clock = ContinuousClock()
        var big = JWKSet(keys: [])
        // The fastest of a few runs each, interleaved: other suites run beside this one, and a run they slow
        // down must not decide the ratio.
        var loading = Duration.seconds(Int64.max)
        var loadingTenth = Duration.seconds(Int64.max)
        for round in 0..<4 {
            if round < 2 { loading = min(loading, try clock.measure { big = try JWKSet.parse(tenThousand) }) }
            loadingTenth = min(loadingTenth, try clock.measure { _ = try JWKSet.parse(oneThousand) })
        }
        #expect(big.keys.count == 10_001)
        #expect(big.rejected.isEmpty)
        // Ten times the keys: about ten times the time (a check that compared every kid with every other would
        // take a hundred times). A ratio of two runs on the same machine, so that a slow or sanitized build
        // passes and a quadratic one does not.
        #expect(loading < loadingTenth * 25, "10,001 keys loaded in \(loading), 1,001 in \(loadingTenth)")

        let verifier = Fixtures.verifier(.oidc)
        let token = Fixtures.token(.oidc)
        let small = JWKSet(keys: [rsa.publicKey])
        #expect(Outcome.of(verifier, token, keys: big) == .accepted)
        #expect(Outcome.of(verifier, rsa.token(header: Fixtures.header(kid: "k9999"), payload: Fixtures.claims(.oidc).json), keys: big) == .rejected(.badSignature))
        #expect(Outcome.of(verifier, rsa.token(header: Fixtures.header(kid: "k10000"), payload: Fixtures.claims(.oidc).json), keys: big) == .rejected(.unknownKey))

        func time(_ keys: JWKSet) -> Duration {
            let clock = ContinuousClock()
            return clock.measure { for _ in 0..<200 { _ = Outcome.of(verifier, token, keys: keys) } }
        }
        // The fastest of five interleaved runs each, for the same reason as above.
        var (inSmall, inBig) = (Duration.seconds(Int64.max), Duration.seconds(Int64.max))
        for _ in 0..<5 {
            inSmall = min(inSmall, time(small))
            inBig = min(inBig, time(big))
        }
        // The key the token names is the last of 10,001; a lookup that grew with the set would show here.
        #expect(inBig < inSmall * 2, "200 verifications: \(inBig) with 10,001 keys, \(inSmall) with one")
    }
}
