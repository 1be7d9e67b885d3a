import Foundation
import JOSE
import TestSupport
import Testing

/// Strict base64url: every byte string has exactly one encoding, and that is the only string decoded to it.
/// Random cases come from a fixed-seed generator, so a failure names a case that can be replayed.
@Suite struct Base64URLTests {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let alphabetSet = Set(alphabet)

    /// base64url by way of Foundation's standard base64, an independent implementation to compare with.
    static func foundationEncode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Every decoding entry point must agree; returns what they agree on.
    static func decodeAll(_ bytes: [UInt8]) -> [UInt8]? {
        let viaBytes = Base64URL.decode(bytes: bytes)
        let viaString = Base64URL.decode(String(decoding: bytes, as: UTF8.self))
        let canonical = bytes.withUnsafeBufferPointer { Base64URL.isCanonical($0) }
        let viaPointer: [UInt8]? = bytes.withUnsafeBufferPointer { source in
            guard let count = Base64URL.decodedCount(forEncodedCount: source.count) else { return nil }
            var out = [UInt8](repeating: 0xAA, count: count)
            let written = out.withUnsafeMutableBufferPointer { Base64URL.decode(source, into: $0) }
            return written.map { Array(out[..<$0]) }
        }
        #expect(viaBytes == viaPointer, "\(String(decoding: bytes, as: UTF8.self))")
        #expect(canonical == (viaBytes != nil), "\(String(decoding: bytes, as: UTF8.self))")
        if bytes.allSatisfy({ $0 < 0x80 }) { #expect(viaString == viaBytes) }
        return viaBytes
    }

    @Test func roundTripOfRandomBytes() {
        var rng = SplitMix64(seed: 0x6261_7365_3634_7572)
        for round in 0..<2000 {
            let count = round < 300 ? round : rng.below(1024)
            let bytes = rng.bytes(count)
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == Self.foundationEncode(bytes), "round \(round)")
            #expect(encoded.utf8.count == (count * 4 + 2) / 3, "round \(round)")
            #expect(encoded.utf8.allSatisfy { Self.alphabetSet.contains($0) }, "round \(round)")
            #expect(Self.decodeAll(Array(encoded.utf8)) == bytes, "round \(round)")
        }
    }

    @Test func knownValues() {
        // RFC 4648 §10, without padding and in the URL alphabet.
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    /// Every string of length 1–3 (the final quantum) is decoded exactly when it is canonical, and then it is
    /// the encoding of what it decodes to.
    @Test func everyShortStringIsCanonicalOrRefused() {
        var accepted = 0
        for a in Self.alphabet {
            #expect(Self.decodeAll([a]) == nil, "one character never decodes")
            for b in Self.alphabet {
                let two = [a, b]
                let decoded2 = Self.decodeAll(two)
                let canonical2 = Self.alphabet.firstIndex(of: b)! & 0x0F == 0
                #expect((decoded2 != nil) == canonical2, "\(String(decoding: two, as: UTF8.self))")
                if let decoded2 { #expect(Array(Base64URL.encode(decoded2).utf8) == two); accepted += 1 }
                for c in Self.alphabet {
                    let three = [a, b, c]
                    let canonical3 = Self.alphabet.firstIndex(of: c)! & 0x03 == 0
                    let isCanonical = three.withUnsafeBufferPointer { Base64URL.isCanonical($0) }
                    #expect(isCanonical == canonical3)
                    if canonical3 { accepted += 1 }
                }
            }
        }
        // 2^8 two-character and 2^16 three-character canonical strings: one per byte string.
        #expect(accepted == 256 + 65536)
    }

    /// A byte outside the alphabet anywhere in an otherwise valid string makes it undecodable.
    @Test func everyByteOutsideTheAlphabetIsRefused() {
        var rng = SplitMix64(seed: 0x6F75_7473_6964_6521)
        for value in 0...255 {
            let byte = UInt8(value)
            let inAlphabet = Self.alphabetSet.contains(byte)
            for _ in 0..<8 {
                var encoded = Array(Base64URL.encode(rng.bytes(3 * (1 + rng.below(20)))).utf8)  // no partial quantum
                encoded[rng.below(encoded.count)] = byte
                #expect((Self.decodeAll(encoded) != nil) == inAlphabet, "byte 0x\(String(value, radix: 16))")
            }
        }
    }

    /// Every byte value at every position of a 116-character string: long inputs are decoded in 32- and
    /// 16-character SIMD blocks and a table-driven tail (116 = 3 × 32 + 16 + 4), and each part must refuse a
    /// byte outside the alphabet wherever it sits, and decode one inside it to what Foundation decodes.
    @Test func everyByteAtEveryPositionOfALongString() {
        var rng = SplitMix64(seed: 0x6C6F_6E67_6236_3421)
        let original = Array(Base64URL.encode(rng.bytes(87)).utf8)
        #expect(original.count == 116)
        for position in original.indices {
            for value in 0...255 {
                var encoded = original
                encoded[position] = UInt8(value)
                let decoded = Self.decodeAll(encoded)
                guard Self.alphabetSet.contains(UInt8(value)) else {
                    #expect(decoded == nil, "byte 0x\(String(value, radix: 16)) at \(position)")
                    continue
                }
                let standard = String(decoding: encoded, as: UTF8.self)
                    .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                #expect(decoded == Data(base64Encoded: standard).map(Array.init), "byte 0x\(String(value, radix: 16)) at \(position)")
            }
        }
    }

    /// Forms other libraries accept and strict base64url refuses.
    @Test func nonCanonicalForms() {
        var rng = SplitMix64(seed: 0x7061_6464_696E_6721)
        for round in 0..<500 {
            let bytes = rng.bytes(1 + rng.below(64))
            let encoded = Base64URL.encode(bytes)
            let standard = Data(bytes).base64EncodedString()
            var forms: [(String, String)] = [
                ("padded", encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)),
                ("one '='", encoded + "="),
                ("leading space", " " + encoded),
                ("trailing newline", encoded + "\n"),
                ("CRLF inside", String(encoded.prefix(1)) + "\r\n" + String(encoded.dropFirst())),
                ("tab inside", String(encoded.prefix(1)) + "\t" + String(encoded.dropFirst())),
                ("one extra character", encoded + (encoded.count % 4 == 0 ? "A" : "")),
            ]
            if standard.contains("+") || standard.contains("/") {
                forms.append(("standard alphabet", standard.replacingOccurrences(of: "=", with: "")))
            }
            if encoded.count % 4 != 0 {
                // Set each unused low bit of the last character in turn.
                let last = Self.alphabet.firstIndex(of: encoded.utf8.last!)!
                let unused = encoded.count % 4 == 2 ? 4 : 2
                for bit in 0..<unused {
                    let changed = String(encoded.dropLast()) + String(UnicodeScalar(Self.alphabet[last | 1 << bit]))
                    forms.append(("unused bit \(bit) set", changed))
                }
            }
            for (name, form) in forms where form != encoded {
                #expect(Self.decodeAll(Array(form.utf8)) == nil, "round \(round): \(name) \(form)")
            }
        }
    }

    /// Random strings over the alphabet plus a few foreign characters: whatever decodes re-encodes to itself,
    /// and agrees with Foundation's decoder.
    @Test func decodedStringsAreTheirOwnEncoding() {
        var rng = SplitMix64(seed: 0x6465_636F_6465_2121)
        let extra = Array("=+/ .\n".utf8)
        var decodedCount = 0
        for round in 0..<5000 {
            let length = rng.below(40)
            let text: [UInt8] = (0..<length).map { _ in rng.chance(1, in: 50) ? rng.pick(extra) : rng.pick(Self.alphabet) }
            guard let decoded = Self.decodeAll(text) else { continue }
            decodedCount += 1
            let string = String(decoding: text, as: UTF8.self)
            #expect(Base64URL.encode(decoded) == string, "round \(round)")
            var standard = string.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
            #expect(Data(base64Encoded: standard).map(Array.init) == decoded, "round \(round)")
        }
        #expect(decodedCount > 500)
    }
}
