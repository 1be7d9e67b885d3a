import TestSupport

/// Generates JSON-ish byte strings for the differential test of ``JSONObject`` against Jansson: mostly valid
/// documents full of the hard parts (escapes, non-ASCII, numbers at the edges of Int64 and Double, duplicate
/// member names spelt differently, nesting), plus mutations that break them in every way a token can arrive
/// broken. Deterministic for a given seed.
struct JSONCaseGenerator {
    var rng: SplitMix64
    /// How deep the last generated document nests (the top-level value is level 1), for callers that walk it.
    private(set) var depthReached = 0

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    /// Member names drawn from a small pool, so that duplicates are frequent; each is written in one of
    /// several equivalent spellings ("a", "\u0061"…), so that duplicates are often only equal after unescaping.
    static let names: [String] = ["a", "b", "sub", "iss", "exp", "", "é", "日本", "😀", "a/b", "\"q\"", "tab\t", "kid"]

    mutating func document() -> [UInt8] {
        depthReached = 0
        var out: [UInt8] = []
        whitespace(&out)
        // Mostly objects at the top; sometimes another value, which Jansson (JSON_DECODE_ANY) reads but
        // JSONObject must refuse.
        if rng.chance(1, in: 25) { value(&out, depth: 1) } else { object(&out, depth: 1) }
        whitespace(&out)
        return out
    }

    /// A document whose deepest value (the scalar 1) is at level `depth` (the top-level object is level 1),
    /// nested through arrays or objects, for the depth limits.
    mutating func deepDocument(depth: Int, objects: Bool) -> [UInt8] {
        if depth == 1 { return Array("{}".utf8) }
        let inner = depth - 2
        var out = Array("{\"d\":".utf8)
        for _ in 0..<inner { out += objects ? Array("{\"d\":".utf8) : [UInt8(ascii: "[")] }
        out += Array("1".utf8)
        for _ in 0..<inner { out.append(objects ? UInt8(ascii: "}") : UInt8(ascii: "]")) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    mutating func whitespace(_ out: inout [UInt8]) {
        guard rng.chance(1, in: 3) else { return }
        for _ in 0..<rng.below(3) { out.append(rng.pick([0x20, 0x09, 0x0A, 0x0D])) }
    }

    mutating func value(_ out: inout [UInt8], depth: Int) {
        depthReached = max(depthReached, depth)
        switch rng.below(depth > 6 ? 6 : 9) {
        case 0: out += Array("true".utf8)
        case 1: out += Array("false".utf8)
        case 2: out += Array("null".utf8)
        case 3, 4: number(&out)
        case 5: string(&out, Array(randomText().utf8))
        case 6: array(&out, depth: depth + 1)
        default: object(&out, depth: depth + 1)
        }
    }

    mutating func object(_ out: inout [UInt8], depth: Int) {
        depthReached = max(depthReached, depth)
        out.append(UInt8(ascii: "{"))
        let count = rng.below(6)
        for k in 0..<count {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            whitespace(&out)
            string(&out, Array(rng.pick(Self.names).utf8))
            whitespace(&out)
            out.append(UInt8(ascii: ":"))
            whitespace(&out)
            value(&out, depth: depth)
            whitespace(&out)
        }
        out.append(UInt8(ascii: "}"))
    }

    mutating func array(_ out: inout [UInt8], depth: Int) {
        depthReached = max(depthReached, depth)
        out.append(UInt8(ascii: "["))
        let count = rng.below(5)
        for k in 0..<count {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            whitespace(&out)
            value(&out, depth: depth)
            whitespace(&out)
        }
        out.append(UInt8(ascii: "]"))
    }

    mutating func randomText() -> String {
        var text = ""
        for _ in 0..<rng.below(8) {
            switch rng.below(10) {
            case 0: text.unicodeScalars.append(UnicodeScalar(UInt8(0x20 + rng.below(0x5F))))
            case 1: text += rng.pick(["\"", "\\", "/", "\u{8}", "\u{C}", "\n", "\r", "\t", "\u{1}", "\u{1F}", "\u{7F}"])
            case 2: text += rng.pick(["é", "ß", "€", "日本語", "😀", "\u{10FFFF}", "\u{FFFF}", "\u{FEFF}", "\u{2028}"])
            case 3:
                // Any scalar except surrogates and NUL.
                var value = UInt32(1 + rng.below(0x10FFFF))
                if (0xD800...0xDFFF).contains(value) { value = 0xE000 }
                text.unicodeScalars.append(UnicodeScalar(value)!)
            default: text += rng.pick(["sub", "a", "firebase", "https://securetoken.google.com/p", "1", " "])
            }
        }
        return text
    }

    /// Writes `text` (UTF-8) as a JSON string, choosing escapes at random where there is a choice.
    mutating func string(_ out: inout [UInt8], _ text: [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in String(decoding: text, as: UTF8.self).unicodeScalars {
            let v = scalar.value
            let mustEscape = v < 0x20 || v == 0x22 || v == 0x5C
            if mustEscape || rng.chance(1, in: 6) {
                escape(&out, scalar)
            } else {
                out += Array(String(scalar).utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    mutating func escape(_ out: inout [UInt8], _ scalar: UnicodeScalar) {
        let short: [UInt32: String] = [0x22: "\\\"", 0x5C: "\\\\", 0x2F: "\\/", 0x08: "\\b", 0x0C: "\\f",
                                       0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"]
        if let s = short[scalar.value], rng.chance(2, in: 3) {
            out += Array(s.utf8)
            return
        }
        let hex = rng.chance(1, in: 2) ? "0123456789abcdef" : "0123456789ABCDEF"
        func unit(_ u: UInt32) {
            out += Array("\\u".utf8)
            for shift in [12, 8, 4, 0] { out.append(Array(hex.utf8)[Int(u >> UInt32(shift) & 0xF)]) }
        }
        if scalar.value >= 0x10000 {
            let v = scalar.value - 0x10000
            unit(0xD800 + (v >> 10))
            unit(0xDC00 + (v & 0x3FF))
        } else {
            unit(scalar.value)
        }
    }

    static let numbers: [String] = [
        "0", "-0", "1", "-1", "42", "1516239022", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999999",
        "0.0", "-0.0", "0.5", "1.5e10", "1E2", "1e+2", "1e-2", "2.5E-3", "1e308", "1.7976931348623157e308",
        "1.7976931348623159e308", "1e309", "-1e309", "2.2250738585072014e-308", "5e-324", "1e-400", "-1e-400",
        "123456789012345678901234567890.5", "1e0", "0e0", "0E-0", "1e99999999999999999999", "0.000000000000000000001",
        // Not numbers in JSON.
        "01", "-01", "00", "1.", ".5", "-", "+1", "1e", "1e+", "0x10", "Infinity", "-Infinity", "NaN", "1.0e", "--1", "1_000",
    ]

    mutating func number(_ out: inout [UInt8]) {
        switch rng.below(3) {
        case 0: out += Array(rng.pick(Self.numbers).utf8)
        case 1: out += Array(String(Int64(bitPattern: rng.next()) >> Int64(rng.below(64))).utf8)
        default:
            let d = Double(bitPattern: rng.next())
            out += Array((d.isFinite ? "\(d)" : "1.25e-7").utf8)
        }
    }

    /// Breaks a document in one of many ways (or, sometimes, in a way that leaves it valid).
    mutating func mutate(_ doc: [UInt8]) -> [UInt8] {
        var d = doc
        let position = { (rng: inout SplitMix64, count: Int) in count == 0 ? 0 : rng.below(count) }
        switch rng.below(14) {
        case 0:  // replace a byte
            if !d.isEmpty { d[position(&rng, d.count)] = UInt8(truncatingIfNeeded: rng.next()) }
        case 1:  // flip a bit
            if !d.isEmpty { d[position(&rng, d.count)] ^= 1 << UInt8(rng.below(8)) }
        case 2:  // truncate
            d = Array(d.prefix(position(&rng, d.count)))
        case 3:  // delete a byte
            if !d.isEmpty { d.remove(at: position(&rng, d.count)) }
        case 4:  // insert a structural or otherwise interesting byte
            d.insert(rng.pick(Array("\"\\{}[]:,0-.eE \t".utf8) + [0x00, 0x7F, 0x80, 0xC0, 0xC2, 0xED, 0xF4, 0xF5, 0xFF]),
                     at: position(&rng, d.count + 1))
        case 5:  // an invalid or borderline UTF-8 sequence, most likely inside a string
            let sequences: [[UInt8]] = [[0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xE0, 0x80, 0x80], [0xE0, 0xA0],
                                        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xED, 0x9F, 0xBF], [0xEF, 0xBF, 0xBF],
                                        [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
                                        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFE], [0xFF]]
            insertInString(&d, rng.pick(sequences))
        case 6:  // an escape that is invalid or borderline
            let escapes = ["\\u0000", "\\ud800", "\\udc00", "\\ud800\\u0041", "\\ud800\\ud800", "\\udbff\\udfff", "\\ud83d\\ude00",
                           "\\uDFFF", "\\u00", "\\u12G4", "\\x41", "\\U0041", "\\'", "\\0", "\\u0061", "\\u00e9", "\\", "\\ud800\\"]
            insertInString(&d, Array(rng.pick(escapes).utf8))
        case 7:  // a raw control character
            insertInString(&d, [UInt8(rng.below(0x20))])
        case 8:  // trailing data
            d += Array(rng.pick(["x", "}", "]", ",", "{}", " 1", "\u{0}", "//", "\n\n", " "]).utf8)
        case 9:  // a byte-order mark or other prefix
            d = Array(rng.pick(["\u{FEFF}", " ", "\u{0}", "[", "x"]).utf8) + d
        case 10:  // duplicate a member: copy the first "name": value pair
            if let colon = d.firstIndex(of: UInt8(ascii: ":")), let start = d.firstIndex(of: UInt8(ascii: "\"")), start < colon,
               let comma = d[colon...].firstIndex(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") }) {
                let member = Array(d[start..<comma])
                d.insert(contentsOf: member + [UInt8(ascii: ",")], at: start)
            }
        case 11:  // replace a number by an edge case
            if let digit = d.firstIndex(where: { (0x30...0x39).contains($0) }) {
                var end = digit
                while end < d.count, Array("0123456789.eE+-".utf8).contains(d[end]) { end += 1 }
                d.replaceSubrange(digit..<end, with: Array(rng.pick(Self.numbers).utf8))
            }
        case 12:  // swap two bytes
            if d.count > 1 { d.swapAt(position(&rng, d.count), position(&rng, d.count)) }
        default:  // two mutations
            d = mutate(mutate(d))
        }
        return d
    }

    /// Inserts `bytes` just after a random quote (usually inside a string), or anywhere if there is none.
    mutating func insertInString(_ d: inout [UInt8], _ bytes: [UInt8]) {
        let quotes = d.indices.filter { d[$0] == UInt8(ascii: "\"") }
        let at = quotes.isEmpty ? rng.below(d.count + 1) : rng.pick(quotes) + 1
        d.insert(contentsOf: bytes, at: at)
    }
}
