import JOSE
import Testing

/// The in-place look-ups that the claim rules use on every token (``JSONObject/number(_:)``,
/// ``JSONObject/string(_:isOneOf:)``, ``JSONObject/kindAndTextLength(of:)``) must say exactly what the
/// ``JSONValue`` path says about the same member: checked on hand-picked members and on thousands of generated
/// documents full of escapes, non-ASCII names and numbers at the edges.
@Suite struct JSONInPlaceLookupTests {
    static let sample = #"""
    {"exp": 1767233766, "iat": 1.5e9, "neg": -3, "big": 9223372036854775807, "s": "9", "n": null,
     "iss": "https:\/\/securetoken.google.com\/p", "aud": "p", "esc": "\u00e9t\u00e9", "empty": "",
     "arr": ["p"], "obj": {"exp": 1}, "t": true}
    """#

    @Test func numbersAreReadInPlace() throws {
        let object = try JSONObject.parse(Self.sample)
        #expect(object.number(JSONKey("exp")) == .integer(1_767_233_766))
        #expect(object.number(JSONKey("iat")) == .real(1.5e9))
        #expect(object.number(JSONKey("neg")) == .integer(-3))
        #expect(object.number(JSONKey("big")) == .integer(Int64.max))
        #expect(object.number(JSONKey("s")) == .notANumber(.string))
        #expect(object.number(JSONKey("n")) == .notANumber(.null))
        #expect(object.number(JSONKey("obj")) == .notANumber(.object))
        #expect(object.number(JSONKey("nbf")) == .missing)
        // Only the object's own members: `exp` inside `obj` is not a member of the top level's `obj` look-up.
        #expect(object["obj"]?.object?.number(JSONKey("exp")) == .integer(1))
        #expect(object["obj"]?.object?.number(JSONKey("iat")) == .missing)
    }

    @Test func stringsAreComparedInPlaceAfterUnescaping() throws {
        let object = try JSONObject.parse(Self.sample)
        #expect(object.string(JSONKey("iss"), isOneOf: ["x", "https://securetoken.google.com/p"]) == true)
        #expect(object.string(JSONKey("iss"), isOneOf: [#"https:\/\/securetoken.google.com\/p"#]) == false)
        #expect(object.string(JSONKey("esc"), isOneOf: ["été"]) == true)
        #expect(object.string(JSONKey("esc"), isOneOf: ["ete"]) == false)
        #expect(object.string(JSONKey("aud"), isOneOf: ["p"]) == true)
        #expect(object.string(JSONKey("aud"), isOneOf: ["P", "pp", ""]) == false)
        #expect(object.string(JSONKey("aud"), isOneOf: []) == false)
        #expect(object.string(JSONKey("empty"), isOneOf: [""]) == true)
        // Not a string: false, even when its text looks like a candidate; absent: nil.
        #expect(object.string(JSONKey("arr"), isOneOf: [#"["p"]"#, "p"]) == false)
        #expect(object.string(JSONKey("t"), isOneOf: ["true"]) == false)
        #expect(object.string(JSONKey("missing"), isOneOf: ["p"]) == nil)
    }

    @Test func stringBytesAreLentInPlace() throws {
        let object = try JSONObject.parse(Self.sample)
        #expect(object.withString(JSONKey("aud")) { Array($0) } == Array("p".utf8))
        #expect(object.withString(JSONKey("esc")) { String(decoding: $0, as: UTF8.self) } == "été")
        #expect(object.withString(JSONKey("empty")) { $0.count } == 0)
        #expect(object.withString(JSONKey("exp")) { _ in true } == nil)
        #expect(object.withString(JSONKey("missing")) { _ in true } == nil)
    }

    @Test func kindAndTextLength() throws {
        let object = try JSONObject.parse(Self.sample)
        for (name, kind, length) in [("aud", JSONKind.string, 3), ("empty", .string, 2), ("esc", .string, 15), ("exp", .integer, 10),
                                     ("arr", .array, 5), ("n", .null, 4)] {
            let shape = try #require(object.kindAndTextLength(of: JSONKey(name)))
            #expect(shape.kind == kind, "\(name)")
            #expect(shape.length == length, "\(name)")
        }
        #expect(object.kindAndTextLength(of: JSONKey("missing")) == nil)
    }

    /// String and name comparisons take a different path per length (overlapping word loads up to sixteen
    /// bytes, memcmp beyond): every length up to 40, with a difference at every position, must compare right.
    @Test func comparisonsAtEveryLengthAndPosition() throws {
        for length in 0...40 {
            let text = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            let object = try JSONObject.parse("{\"\(text)\": \"\(text)\"}")
            let key = JSONKey(text)
            #expect(object[key]?.stringEquals(text) == true, "length \(length)")
            #expect(object.string(key, isOneOf: [text]) == true, "length \(length)")
            #expect(object.string(key, isOneOf: [text + "a"]) == false, "length \(length)")
            for position in 0..<length {
                var bytes = Array(text.utf8)
                bytes[position] = UInt8(ascii: "Z")
                let other = String(decoding: bytes, as: UTF8.self)
                #expect(object[key]?.stringEquals(other) == false, "length \(length), position \(position)")
                #expect(object.string(key, isOneOf: [other]) == false, "length \(length), position \(position)")
                #expect(object.number(JSONKey(other)) == .missing, "length \(length), position \(position)")
            }
        }
    }

    /// A key holds a name of up to 32 bytes in itself and a longer one in an array: either way it gives its name
    /// back, is equal to (and hashes as) a key made from the same name only, and finds its member, also when the
    /// document spells the name with escapes.
    @Test func keysInlineAndLong() throws {
        // Every way a name is held: packed (under four bytes), two four-byte words, two or four eight-byte words, an array.
        let names = ["", "a", "exp", "nonc", "email", "abcdefg", "abcdefgh", "sign_in_provider", "sign_in_providers",
                     String(repeating: "n", count: 31), String(repeating: "n", count: 32),
                     String(repeating: "n", count: 33), String(repeating: "é", count: 16), String(repeating: "é", count: 17),
                     "https://example.com/claims/" + String(repeating: "z", count: 40)]
        for name in names {
            let key = JSONKey(name)
            #expect(key.name == name)
            #expect(key == JSONKey(name))
            #expect(key.hashValue == JSONKey(name).hashValue)
            for other in names where other != name { #expect(key != JSONKey(other), "\(name) against \(other)") }
            let escaped = name.unicodeScalars.map { scalar in
                let hex = String(scalar.value, radix: 16)
                return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }.joined()
            for spelling in [name, escaped] {
                let object = try JSONObject.parse("{\"#\": 1, \"\(spelling)\": 7, \"\(spelling)x\": 8}")
                #expect(object.number(key) == .integer(7), "\(name) spelt \(spelling)")
            }
        }
        #expect(Set(names.map(JSONKey.init)).count == names.count)
    }

    /// On generated documents: for every member name in the generator's pool (spelt with and without escapes in
    /// the documents), the in-place answers equal the ones derived from ``JSONObject/subscript(_:)-(JSONKey)``.
    @Test func agreeWithValuesOnGeneratedDocuments() {
        var generator = JSONCaseGenerator(seed: 0x1D70_4E5)
        var compared = 0
        let candidatesPool = JSONCaseGenerator.names + ["1", "true", "x", "é"]
        for _ in 0..<4_000 {
            let bytes = generator.document()
            guard let object = try? JSONObject.parse(bytes) else { continue }
            for name in JSONCaseGenerator.names {
                let key = JSONKey(name)
                let value = object[key]
                let expectedNumber: JSONNumberMember
                switch value?.kind {
                case nil: expectedNumber = .missing
                case .integer?: expectedNumber = .integer(value!.int64!)
                case .real?: expectedNumber = .real(value!.double!)
                case let kind?: expectedNumber = .notANumber(kind)
                }
                #expect(object.number(key) == expectedNumber, "\(name) in \(String(decoding: bytes, as: UTF8.self))")
                let candidates = Array(candidatesPool.shuffled(using: &generator.rng).prefix(3)) + (value?.string.map { [$0] } ?? [])
                let expectedMatch: Bool? = value.map { v in candidates.contains { v.stringEquals($0) } }
                #expect(object.string(key, isOneOf: candidates) == expectedMatch)
                #expect(object.withString(key) { String(decoding: $0, as: UTF8.self) } == value?.string)
                #expect(object.withRawValue(key) { kind, text in "\(kind) \(String(decoding: text, as: UTF8.self))" }
                        == value.map { "\($0.kind) \($0.rawJSON)" })
                let shape = object.kindAndTextLength(of: key)
                #expect(shape?.kind == value?.kind)
                #expect(shape?.length == value.map { $0.rawJSON.utf8.count })
                compared += 1
            }
        }
        #expect(compared > 20_000)
    }
}
