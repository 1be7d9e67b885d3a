import IDTokenKit
import JOSE
import Testing

@Suite struct NonceTests {
    static let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    @Test func generatedNonceHasTheLengthAlphabetAndHash() throws {
        for length in [16, 32, 43, 512] {
            let nonce = try Nonce.generate(length: length)
            #expect(nonce.raw.count == length)
            #expect(nonce.raw.allSatisfy(Self.alphabet.contains))
            #expect(nonce.sha256Hex == SHA256.hexDigest(utf8: nonce.raw))
            #expect(nonce.sha256Hex.count == 64)
        }
        #expect(try Nonce.generate() != Nonce.generate())
        #expect(throws: ConfigurationError.self) { try Nonce.generate(length: 15) }
        #expect(throws: ConfigurationError.self) { try Nonce.generate(length: 513) }
    }

    /// Every symbol of the alphabet occurs, at about the same rate: 64 000 characters give each symbol an
    /// expected 1000 occurrences (standard deviation about 31); a modulo-biased or truncated alphabet would
    /// leave some symbols far outside 800–1200.
    @Test func charactersAreUniform() throws {
        var counts: [Character: Int] = [:]
        for _ in 0..<125 { for c in try Nonce.generate(length: 512).raw { counts[c, default: 0] += 1 } }
        #expect(counts.count == 64)
        for (symbol, count) in counts { #expect((800...1200).contains(count), "\(symbol): \(count)") }
    }

    @Test func knownSHA256() {
        // FIPS 180-2 example.
        #expect(SHA256.hexDigest(utf8: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // The four-bytes-at-a-time writer used for nonces: every byte value, at every position of every length
        // up to 9 (whole words and tails), against the digits written one at a time.
        for length in 0...9 {
            for value in 0...255 {
                for position in 0..<max(length, 1) where position < length || length == 0 {
                    var bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
                    if length > 0 { bytes[position] = UInt8(value) }
                    let expected = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
                    var hex = [UInt8](repeating: 0, count: 2 * length)
                    bytes.withUnsafeBytes { b in hex.withUnsafeMutableBytes { SHA256.writeLowercaseHex(b, into: $0) } }
                    #expect(String(decoding: hex, as: UTF8.self) == expected)
                }
            }
        }
        #expect(Nonce.sha256Hex("abc").expectedClaimValue == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Nonce.exact("abc").expectedClaimValue == "abc")
        #expect(Nonce("r", mode: .sha256Hex) == .sha256Hex("r"))
        // A nonce without a mode takes the profile's, and is compared exactly when the profile has none.
        #expect(Nonce("r").resolved(.sha256Hex) == .sha256Hex("r"))
        #expect(Nonce("r").resolved(nil) == .exact("r"))
        #expect(Nonce.exact("r").resolved(.sha256Hex) == .exact("r"))
        #expect(Nonce("abc").expectedClaimValue == "abc")
    }

    @Test func matchingIsExact() throws {
        let claims = try JSONObject.parse(#"{"h":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad","e":"a\/b","n":5}"#)
        #expect(Nonce.sha256Hex("abc").matches(claims["h"]!))
        #expect(!Nonce.sha256Hex("abd").matches(claims["h"]!))
        #expect(!Nonce.exact("abc").matches(claims["h"]!))
        #expect(Nonce.exact("a/b").matches(claims["e"]!))
        #expect(!Nonce.exact("a/").matches(claims["e"]!))
        #expect(!Nonce.exact("5").matches(claims["n"]!))
    }
}
