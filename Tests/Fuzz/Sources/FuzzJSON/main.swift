import FuzzDriver
import JOSE

// The token JSON reader (JSONObject) against Jansson (JSONTree) on the same bytes.
//
// The rule is JSONDifferentialTests' rule: JSONObject accepts a document exactly when Jansson (with
// JSON_REJECT_DUPLICATES) accepts it and its top level is an object, and then both read the same members with the
// same values. The one allowed difference is Jansson's NUL quirk (JanssonQuirks.withoutDroppedNULs). Both run with
// Jansson's own depth limit, 2048. After the comparison, every accessor of every value is exercised.

let maxDepth = JSONObject.depthCeiling

enum Verdict { case accepted(JSONObject), rejected(JSONSyntaxError) }

func ours(_ bytes: [UInt8]) -> Verdict {
    do { return .accepted(try JSONObject.parse(bytes, maxDepth: maxDepth)) } catch { return .rejected(error) }
}

/// Jansson's reading, or nil when it refuses the document or its top level is not an object.
func jansson(_ bytes: [UInt8]) -> JSONTree? {
    guard let tree = try? JSONTree.parse(bytes, maxDepth: maxDepth), tree.objectMembers != nil else { return nil }
    return tree
}

/// Touches every accessor of `value` and of everything inside it, checking that they agree with `kind`.
func exercise(_ value: JSONValue, depth: Int = 0) {
    _ = value.rawJSON
    switch value.kind {
    case .string:
        guard let string = value.string, let bytes = value.stringBytes else { Fuzz.fail("string without text: \(value.rawJSON)") }
        if Array(string.utf8) != bytes { Fuzz.fail("string and stringBytes differ: \(value.rawJSON)") }
        if !value.stringEquals(string) { Fuzz.fail("stringEquals refuses its own text: \(value.rawJSON)") }
        if value.unicodeScalarCount != string.unicodeScalars.count { Fuzz.fail("unicodeScalarCount wrong: \(value.rawJSON)") }
        if value.isEmptyString != string.isEmpty { Fuzz.fail("isEmptyString wrong: \(value.rawJSON)") }
    case .integer:
        if value.int64 == nil || value.double == nil { Fuzz.fail("integer without value: \(value.rawJSON)") }
    case .real:
        guard let d = value.double, d.isFinite else { Fuzz.fail("real without a finite value: \(value.rawJSON)") }
    case .true, .false:
        if value.bool == nil { Fuzz.fail("literal without bool: \(value.rawJSON)") }
    case .null:
        if !value.isNull { Fuzz.fail("null not isNull") }
    case .array:
        guard let elements = value.array else { Fuzz.fail("array without elements: \(value.rawJSON)") }
        for element in elements { exercise(element, depth: depth + 1) }
    case .object:
        guard let object = value.object else { Fuzz.fail("object without members: \(value.rawJSON)") }
        exercise(object, depth: depth + 1)
    }
}

func exercise(_ object: JSONObject, depth: Int = 0) {
    let keys = object.keys
    if keys.count != object.count { Fuzz.fail("keys.count \(keys.count) != count \(object.count)") }
    for (key, value) in object.entries {
        guard let found = object[key] else { Fuzz.fail("member \(key.debugDescription) not found by name") }
        if found.rawJSON != value.rawJSON { Fuzz.fail("member \(key.debugDescription) found with another value") }
        if !object.contains(key) { Fuzz.fail("contains(\(key.debugDescription)) is false") }
        exercise(value, depth: depth)
    }
}

Fuzz.run { raw in
    let bytes = [UInt8](raw)
    let reference = jansson(bytes)
    switch (ours(bytes), reference) {
    case (.accepted, nil):
        Fuzz.fail("JSONObject accepts, Jansson rejects: \(Fuzz.show(bytes))")
    case (.rejected(let error), let tree?):
        // Jansson's quirk: a raw NUL right after a scalar is dropped. Allowed only when JSONObject stopped at
        // such a NUL and both agree once those bytes are gone.
        guard let stripped = JanssonQuirks.withoutDroppedNULs(bytes), error.offset < bytes.count, bytes[error.offset] == 0,
              case .accepted(let object) = ours(stripped), let strippedTree = jansson(stripped),
              JSONSameValue.compare(object, strippedTree) == nil, JSONSameValue.compare(object, tree) == nil else {
            Fuzz.fail("JSONObject rejects (\(error)), Jansson accepts: \(Fuzz.show(bytes))")
        }
    case (.rejected, nil):
        break
    case (.accepted(let object), let tree?):
        if let problem = JSONSameValue.compare(object, tree) { Fuzz.fail("values differ: \(problem): \(Fuzz.show(bytes))") }
        exercise(object)
    }
}
