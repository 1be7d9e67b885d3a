internal import CJansson

/// A whole JSON document as a Swift value, read by Jansson with `JSONREJECT_DUPLICATES`.
///
/// Used for key sets, certificate maps, configuration and other documents that are read once and kept;
/// tokens themselves go through ``JSONObject``, which does not build a tree.
public indirect enum JSONTree: Sendable, Equatable {
    /// An object, its members in document order (duplicate names are refused when reading).
    case object([(key: String, value: JSONTree)])
    /// An array.
    case array([JSONTree])
    /// A string.
    case string(String)
    /// A number without a fraction or exponent that fits in 64 bits.
    case integer(Int64)
    /// Any other number.
    case real(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null

    public static func == (lhs: JSONTree, rhs: JSONTree) -> Bool {
        switch (lhs, rhs) {
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case let (.array(a), .array(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.real(a), .real(b)): return a == b
        case let (.bool(a), .bool(b)): return a == b
        case (.null, .null): return true
        default: return false
        }
    }

    /// Parses a JSON document (any value at the top) with Jansson, refusing duplicate member names and
    /// nesting deeper than `maxDepth`.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONSyntaxError) -> JSONTree {
        var error = json_error_t()
        let flags = idtk_json_reject_duplicates() | idtk_json_decode_any()
        let root = bytes.withUnsafeBytes { raw in
            json_loadb(raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count, flags, &error)
        }
        guard let root else {
            let text = withUnsafeBytes(of: error.text) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            throw JSONSyntaxError(reason: text, offset: Int(error.position))
        }
        defer { idtk_json_decref(root) }
        return try convert(root, depth: 1, maxDepth: maxDepth)
    }

    /// Reads a whole JSON document from text, as the byte form does.
    public static func parse(_ text: String, maxDepth: Int = 64) throws(JSONSyntaxError) -> JSONTree {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    private static func convert(_ node: UnsafeMutablePointer<json_t>, depth: Int, maxDepth: Int) throws(JSONSyntaxError) -> JSONTree {
        switch idtk_json_type(node) {
        case Int32(JSON_OBJECT.rawValue):
            guard depth <= maxDepth else { throw JSONSyntaxError(reason: "nesting deeper than \(maxDepth)", offset: 0) }
            var members: [(key: String, value: JSONTree)] = []
            var iterator = json_object_iter(node)
            while let it = iterator {
                let key = String(cString: json_object_iter_key(it))
                let value = try convert(json_object_iter_value(it), depth: depth + 1, maxDepth: maxDepth)
                members.append((key, value))
                iterator = json_object_iter_next(node, it)
            }
            return .object(members)
        case Int32(JSON_ARRAY.rawValue):
            guard depth <= maxDepth else { throw JSONSyntaxError(reason: "nesting deeper than \(maxDepth)", offset: 0) }
            var elements: [JSONTree] = []
            let count = json_array_size(node)
            elements.reserveCapacity(count)
            for k in 0..<count {
                elements.append(try convert(json_array_get(node, k), depth: depth + 1, maxDepth: maxDepth))
            }
            return .array(elements)
        case Int32(JSON_STRING.rawValue):
            let length = json_string_length(node)
            let text = UnsafeRawBufferPointer(start: json_string_value(node), count: length)
            return .string(String(decoding: text, as: UTF8.self))
        case Int32(JSON_INTEGER.rawValue):
            return .integer(Int64(json_integer_value(node)))
        case Int32(JSON_REAL.rawValue):
            return .real(json_real_value(node))
        case Int32(JSON_TRUE.rawValue):
            return .bool(true)
        case Int32(JSON_FALSE.rawValue):
            return .bool(false)
        default:
            return .null
        }
    }

    // MARK: Access

    public subscript(key: String) -> JSONTree? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.key == key })?.value
    }

    /// The string, when the value is one.
    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The integer, when the value is one.
    public var int64: Int64? { if case .integer(let i) = self { return i } else { return nil } }
    /// The number as a `Double`, when the value is a number.
    public var double: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .real(let d): return d
        default: return nil
        }
    }
    /// The boolean, when the value is one.
    public var bool: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The elements, when the value is an array.
    public var array: [JSONTree]? { if case .array(let a) = self { return a } else { return nil } }
    /// The members in document order, when the value is an object.
    public var objectMembers: [(key: String, value: JSONTree)]? {
        if case .object(let m) = self { return m } else { return nil }
    }
}
