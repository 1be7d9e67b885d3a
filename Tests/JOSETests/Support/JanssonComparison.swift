import JOSE

// Shared by JSONDifferentialTests and the FuzzJSON fuzz target (Tests/Fuzz), which links this file.

/// Where Jansson, the reference reader, departs from RFC 8259.
enum JanssonQuirks {
    /// Jansson's one known deviation from RFC 8259: after a number or a literal (`true`, `false`, `null`) its
    /// lexer reads one character ahead and puts it back, and putting back a NUL byte loses it (the stream
    /// buffer takes NUL for "empty"). So Jansson 2.14 accepts `{"a":1\0}` and `[true\0]`, a single raw NUL
    /// right after such a token. RFC 8259 has no place for a NUL outside a string, and JSONObject refuses it.
    ///
    /// Returns the document without those NUL bytes, or nil when it has none.
    static func withoutDroppedNULs(_ bytes: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var inString = false
        var escaped = false
        var dropped = false
        for (k, b) in bytes.enumerated() {
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == 0, k > 0, let previous = out.last, k + 1 == bytes.count || bytes[k + 1] != 0,
                      Array("0123456789el".utf8).contains(previous), bytes[k - 1] != 0 {
                dropped = true
                continue
            }
            out.append(b)
        }
        return dropped ? out : nil
    }
}

/// Compares what JSONObject read with what Jansson read: same members, same kinds, same values (strings as
/// bytes, so that canonically equivalent but different strings are not confused; reals bit for bit).
enum JSONSameValue {
    static func compare(_ object: JSONObject, _ tree: JSONTree) -> String? {
        guard let members = tree.objectMembers else { return "Jansson's top level is not an object" }
        let ours = object.entries
        guard ours.count == members.count else { return "member count \(ours.count) vs \(members.count)" }
        for (key, value) in ours {
            guard let match = members.first(where: { Array($0.key.utf8) == Array(key.utf8) }) else {
                return "member \(key.debugDescription) missing from Jansson's object"
            }
            if let problem = compare(value, match.value, path: key) { return problem }
        }
        return nil
    }

    static func compare(_ value: JSONValue, _ tree: JSONTree, path: String) -> String? {
        switch (value.kind, tree) {
        case (.string, .string(let s)):
            return value.stringBytes == Array(s.utf8) ? nil : "\(path): string \(value.rawJSON) vs \(s.debugDescription)"
        case (.integer, .integer(let i)):
            return value.int64 == i ? nil : "\(path): integer \(value.rawJSON) vs \(i)"
        case (.real, .real(let d)):
            return value.double?.bitPattern == d.bitPattern ? nil : "\(path): real \(value.rawJSON) vs \(d)"
        case (.true, .bool(true)), (.false, .bool(false)), (.null, .null):
            return nil
        case (.array, .array(let elements)):
            guard let ours = value.array else { return "\(path): array not readable" }
            guard ours.count == elements.count else { return "\(path): \(ours.count) vs \(elements.count) elements" }
            for (k, (a, b)) in zip(ours, elements).enumerated() {
                if let problem = compare(a, b, path: "\(path)[\(k)]") { return problem }
            }
            return nil
        case (.object, .object):
            guard let ours = value.object else { return "\(path): object not readable" }
            return compare(ours, tree).map { "\(path).\($0)" }
        default:
            return "\(path): kind \(value.kind) vs \(tree)"
        }
    }
}
