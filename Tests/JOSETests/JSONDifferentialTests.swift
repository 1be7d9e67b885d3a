import CJansson
import JOSE
import Testing

/// ``JSONObject`` (the token reader) against Jansson (the reader for key sets and configuration) on the same
/// bytes: thousands of generated documents and mutations, from fixed seeds.
///
/// The rule: JSONObject accepts a document exactly when Jansson, with `JSON_REJECT_DUPLICATES`, accepts it and
/// its top-level value is an object; and then both read the same members with the same values. Jansson's own
/// rules set the reference: no `\u0000` without `JSON_ALLOW_NUL`, integers must fit `json_int_t` (Int64), reals
/// must not overflow (underflow to zero is fine), nesting at most 2048 (`JSON_PARSER_MAX_DEPTH`), so
/// JSONObject runs with `maxDepth: 2048`. Any disagreement is a bug in JSONReader; cases that found one are
/// kept in ``regressions``.
@Suite struct JSONDifferentialTests {
    static let maxDepth = 2048

    enum Verdict: Equatable { case accepted, rejected }

    /// Jansson's verdict straight from `json_loadb`, without building a Swift tree (which recursion would limit).
    static func jansson(_ bytes: [UInt8]) -> Verdict {
        var error = json_error_t()
        let root = bytes.withUnsafeBytes { raw in
            json_loadb(raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count,
                       idtk_json_reject_duplicates() | idtk_json_decode_any(), &error)
        }
        guard let root else { return .rejected }
        defer { idtk_json_decref(root) }
        return idtk_json_type(root) == Int32(JSON_OBJECT.rawValue) ? .accepted : .rejected
    }

    enum Comparison: Equatable {
        case agree
        /// JSONObject refuses a NUL byte that Jansson drops (see ``JanssonQuirks/withoutDroppedNULs(_:)``); without those
        /// bytes the two agree again.
        case janssonDropsNUL
        case disagree(String)
    }

    /// Checks one document; returns a description of the disagreement, or nil (agreement, or Jansson's NUL quirk,
    /// which `quirks` counts).
    static func disagreement(_ bytes: [UInt8], compareValues: Bool = true, quirks: inout Int) -> String? {
        switch compare(bytes, compareValues: compareValues) {
        case .agree: return nil
        case .janssonDropsNUL: quirks += 1; return nil
        case .disagree(let problem): return problem
        }
    }

    static func disagreement(_ bytes: [UInt8], compareValues: Bool = true) -> String? {
        var quirks = 0
        return disagreement(bytes, compareValues: compareValues, quirks: &quirks)
    }

    static func compare(_ bytes: [UInt8], compareValues: Bool = true) -> Comparison {
        let ours = Result { () throws(JSONSyntaxError) in try JSONObject.parse(bytes, maxDepth: maxDepth) }
        let reference = jansson(bytes)
        switch (ours, reference) {
        case (.success, .rejected):
            return .disagree("JSONObject accepts, Jansson rejects")
        case (.failure(let error), .accepted):
            if let stripped = JanssonQuirks.withoutDroppedNULs(bytes), error.offset < bytes.count, bytes[error.offset] == 0, compare(stripped, compareValues: compareValues) == .agree,
               (try? JSONObject.parse(stripped, maxDepth: maxDepth)) != nil {
                return .janssonDropsNUL
            }
            return .disagree("JSONObject rejects (\(error)), Jansson accepts")
        case (.failure, .rejected):
            return .agree
        case (.success(let object), .accepted):
            guard compareValues else { return .agree }
            let tree: JSONTree
            do { tree = try JSONTree.parse(bytes, maxDepth: 64) } catch { return .disagree("Jansson accepts but JSONTree fails: \(error)") }
            return JSONSameValue.compare(object, tree).map(Comparison.disagree) ?? .agree
        }
    }

    static func show(_ bytes: [UInt8]) -> String {
        let shown = bytes.prefix(300).map { b -> String in
            (0x20..<0x7F).contains(b) && b != UInt8(ascii: "\\") ? String(UnicodeScalar(b)) : "\\x" + String(b, radix: 16)
        }.joined()
        return bytes.count > 300 ? shown + "…(\(bytes.count) bytes)" : shown
    }

    @Test(arguments: [UInt64(0x4A53_4F4E_0001), 0x4A53_4F4E_0002, 0x4A53_4F4E_0003, 0x4A53_4F4E_0004])
    func generatedDocuments(seed: UInt64) {
        var generator = JSONCaseGenerator(seed: seed)
        var counts = (accepted: 0, rejected: 0)
        var failures = 0
        var quirks = 0
        for n in 0..<6000 {
            var doc = generator.document()
            if n % 2 != 0 { doc = generator.mutate(doc) }
            if let problem = Self.disagreement(doc, quirks: &quirks) {
                failures += 1
                if failures <= 20 { Issue.record("seed \(seed) case \(n): \(problem): \(Self.show(doc))") }
            }
            if (try? JSONObject.parse(doc, maxDepth: Self.maxDepth)) != nil { counts.accepted += 1 } else { counts.rejected += 1 }
        }
        #expect(failures == 0)
        // Both outcomes must be well represented, or the comparison proves little.
        #expect(counts.accepted > 1500, "\(counts)")
        #expect(counts.rejected > 1500, "\(counts)")
        // The NUL quirk is rare in the mutations; it is pinned down by janssonNULQuirk, not counted here.
        #expect(quirks < 20)
    }

    /// Jansson's NUL quirk, pinned down: if a Jansson update fixes it, these cases start to agree and this test
    /// says so, so the exception in ``compare(_:compareValues:)`` can go.
    @Test func janssonNULQuirk() {
        let quirky: [[UInt8]] = [
            Array("{\"a\":1".utf8) + [0] + Array("}".utf8),
            Array("{\"a\":1.5".utf8) + [0] + Array(" }".utf8),
            Array("{\"a\":true".utf8) + [0] + Array("}".utf8),
            Array("{\"a\":null".utf8) + [0] + Array(",\"b\":2}".utf8),
        ]
        for bytes in quirky {
            #expect(Self.jansson(bytes) == .accepted, "\(Self.show(bytes))")
            #expect(throws: JSONSyntaxError.self) { try JSONObject.parse(bytes, maxDepth: Self.maxDepth) }
            #expect(Self.compare(bytes) == .janssonDropsNUL, "\(Self.show(bytes))")
        }
        // Everywhere else a NUL byte is refused by both.
        let refused: [[UInt8]] = [
            Array("{\"a\":".utf8) + [0] + Array("1}".utf8),
            Array("{\"a\":\"x".utf8) + [0] + Array("\"}".utf8),
            Array("{\"a\":\"x\"".utf8) + [0] + Array("}".utf8),
            Array("{\"a\":1".utf8) + [0, 0] + Array("}".utf8),
            Array("{\"a\":1}".utf8) + [0],
            [0] + Array("{}".utf8),
        ]
        for bytes in refused {
            #expect(Self.jansson(bytes) == .rejected, "\(Self.show(bytes))")
            #expect(Self.compare(bytes) == .agree, "\(Self.show(bytes))")
        }
    }

    /// Depth around Jansson's limit, as arrays and as objects, plus mutations of deep documents.
    @Test func depthAroundTheLimit() {
        var generator = JSONCaseGenerator(seed: 0x4445_5054_48)
        for depth in [1, 2, 3, 31, 32, 33, 64, 1000, 2046, 2047, 2048, 2049, 2050, 3000, 10_000] {
            for objects in [false, true] {
                let doc = generator.deepDocument(depth: depth, objects: objects)
                #expect(Self.disagreement(doc, compareValues: depth <= 32) == nil, "depth \(depth), objects \(objects)")
                let ours = (try? JSONObject.parse(doc, maxDepth: Self.maxDepth)) != nil
                // The deepest value, the scalar 1, is at level `depth`.
                #expect(ours == (depth <= 2048), "depth \(depth)")
                for _ in 0..<5 {
                    let mutated = generator.mutate(doc)
                    #expect(Self.disagreement(mutated, compareValues: false) == nil, "depth \(depth) mutated: \(Self.show(mutated))")
                }
            }
        }
    }

    /// Cases written by hand for the rules above, each a place where two readers commonly differ.
    static let handWritten: [String] = [
        "{}", " {} ", "{\"a\":1}", "{\"a\":1,\"a\":1}", "{\"a\":1,\"\\u0061\":2}", "{\"\\u0061\":1,\"a\":2}",
        "{\"é\":1,\"\\u00e9\":2}", "{\"😀\":1,\"\\ud83d\\ude00\":2}", "{\"a/b\":1,\"a\\/b\":2}", "{\"a\":{\"b\":1,\"b\":2}}",
        "{\"a\":[{\"b\":1,\"b\":2}]}", "{\"a\":{\"b\":1},\"b\":{\"a\":1}}", "{\"a\":\"\\u0000\"}", "{\"\\u0000\":1}",
        "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":\"\\ud800\\udc00\"}", "{\"a\":\"\\ud800x\"}",
        "{\"a\":9223372036854775807}", "{\"a\":-9223372036854775808}", "{\"a\":9223372036854775808}",
        "{\"a\":-9223372036854775809}", "{\"a\":1e308}", "{\"a\":1e309}", "{\"a\":-1e309}", "{\"a\":1e-400}",
        "{\"a\":-0}", "{\"a\":-0.0}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.1}", "{\"a\":+1}", "{\"a\":1e}", "{\"a\":NaN}",
        "{\"a\":true,\"b\":false,\"c\":null}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":falsee}", "{\"a\":[1,]}", "{\"a\":1,}",
        "{,}", "{\"a\"}", "{\"a\":}", "{a:1}", "{'a':1}", "[]", "1", "\"s\"", "null", "", " ", "{}x", "{}{}",
        "\u{FEFF}{}", "{\"a\":\"\t\"}", "{\"a\":\"\u{7F}\"}", "{\"a\":\"\\/\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u00G0\"}",
        "{\"a\":[[[[[]]]]]}", "{\"a\":\"\u{10FFFF}\"}", "{\"a\":\"\\uDBFF\\uDFFF\"}", "{\"a\":\"\\uFFFF\"}",
        "{\"a\":1}\n", "{\"a\":1}\r\n\t ", "{\"a\" : 1 , \"b\" : [ 1 , 2 ] }",
    ]

    @Test func handWrittenCases() {
        for text in Self.handWritten {
            #expect(Self.disagreement(Array(text.utf8)) == nil, "\(text)")
        }
        // Raw bytes that are not UTF-8, inside and outside strings.
        let raw: [[UInt8]] = [
            Array("{\"a\":\"".utf8) + [0xC0, 0x80] + Array("\"}".utf8),
            Array("{\"a\":\"".utf8) + [0xED, 0xA0, 0x80] + Array("\"}".utf8),
            Array("{\"a\":\"".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("\"}".utf8),
            Array("{\"a\":\"".utf8) + [0xF0, 0x9F, 0x98] + Array("\"}".utf8),
            Array("{\"a\":\"".utf8) + [0x00] + Array("\"}".utf8),
            Array("{\"a\":1}".utf8) + [0x00],
            [0xEF, 0xBB, 0xBF] + Array("{}".utf8),
            Array("{\"".utf8) + [0xFF] + Array("\":1}".utf8),
        ]
        for bytes in raw { #expect(Self.disagreement(bytes) == nil, "\(Self.show(bytes))") }
    }

    /// Documents that once made the two readers disagree, with what was wrong.
    static let regressions: [(why: String, bytes: [UInt8])] = {
        var generator = JSONCaseGenerator(seed: 0)
        let why = "JSONReader counted only containers as levels, Jansson counts every value: a scalar at level 2049 "
            + "inside containers at level 2048 was accepted by JSONObject(maxDepth: 2048) and refused by Jansson"
        return [
            (why + " (arrays)", generator.deepDocument(depth: 2049, objects: false)),
            (why + " (objects)", generator.deepDocument(depth: 2049, objects: true)),
        ]
    }()

    @Test func regressionCases() {
        for (why, bytes) in Self.regressions {
            #expect(Self.disagreement(bytes) == nil, "\(why)")
            #expect(Self.jansson(bytes) == .rejected, "\(why)")
        }
        // The same counting at the default limit of 32: the deepest value may be at level 32, not 33.
        var generator = JSONCaseGenerator(seed: 0)
        #expect(throws: Never.self) { try JSONObject.parse(generator.deepDocument(depth: 32, objects: false)) }
        #expect(throws: JSONSyntaxError.self) { try JSONObject.parse(generator.deepDocument(depth: 33, objects: false)) }
    }
}
