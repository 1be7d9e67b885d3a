#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON object read strictly (see ``JSONObject/parse(_:maxDepth:)``), holding its own UTF-8 bytes.
///
/// Members are indexed as byte ranges; each value is decoded only when it is asked for. Nested objects are
/// views on the same storage, so reading `firebase.sign_in_provider` copies nothing.
public struct JSONObject: Sendable {
    @usableFromInline let storage: [UInt8]
    @usableFromInline let members: [JSONMember]

    /// The default nesting limit for token headers and claims. Real ID tokens nest three or four levels.
    public static let defaultMaxDepth = 32

    /// The deepest nesting ever read, whatever `maxDepth` a caller passes: 2048, Jansson's own limit
    /// (`JSON_PARSER_MAX_DEPTH`). The reader recurses once per level; without a ceiling, a caller who raised
    /// the limit would let a document of nested brackets exhaust the thread's stack and crash the process
    /// (a debug build crashed between 3,900 and 5,000 levels on a Swift concurrency thread).
    public static let depthCeiling = 2048

    @usableFromInline init(storage: [UInt8], members: [JSONMember]) {
        self.storage = storage
        self.members = members
    }

    /// Parses `bytes`, which must be exactly one JSON object (surrounding whitespace allowed), nested at most
    /// `maxDepth` levels deep (capped at ``depthCeiling``). Levels count values as Jansson does: the object is
    /// level 1, its members' values level 2, and so on, scalars included.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSONObject {
        let members = try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) -> [JSONMember] in
            var reader = JSONReader(buffer, maxDepth: maxDepth, capacity: 16)
            return try reader.readTopLevelObject()
        }
        return JSONObject(storage: bytes, members: members)
    }

    /// Parses a string holding one JSON object.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSONObject {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    /// The number of members.
    public var count: Int { members.count }

    /// The member names, in document order.
    public var keys: [String] {
        members.map { member in
            storage.withUnsafeBufferPointer { buffer in
                let body = UnsafeBufferPointer(rebasing: buffer[Int(member.keyStart)..<Int(member.keyEnd)])
                return member.keyEscaped ? String(decoding: JSONReader.unescape(body), as: UTF8.self)
                                         : String(decoding: body, as: UTF8.self)
            }
        }
    }

    /// The value of the member named `key`, or nil.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        var key = key
        return key.withUTF8 { name -> JSONValue? in
            guard let position = index(of: name) else { return nil }
            let member = members[position]
            return JSONValue(storage: storage, start: Int(member.valueStart), end: Int(member.valueEnd),
                             kind: member.kind, escaped: member.valueEscaped)
        }
    }

    /// Whether a member named `key` is present (whatever its value, `null` included).
    @inlinable
    public func contains(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { index(of: $0) != nil }
    }

    @usableFromInline
    func index(of name: UnsafeBufferPointer<UInt8>) -> Int? {
        let hash = JSONReader.fnv(name.baseAddress ?? UnsafePointer(bitPattern: 1)!, name.count)
        return storage.withUnsafeBufferPointer { buffer -> Int? in
            for position in members.indices {
                let member = members[position]
                guard member.keyHash == hash else { continue }
                let body = UnsafeBufferPointer(rebasing: buffer[Int(member.keyStart)..<Int(member.keyEnd)])
                if member.keyEscaped {
                    if JSONReader.unescape(body).elementsEqual(name) { return position }
                } else if bytesEqual(body, name) {
                    return position
                }
            }
            return nil
        }
    }

    /// Every member as (name, value), in document order.
    public var entries: [(key: String, value: JSONValue)] {
        zip(keys, members).map { key, member in
            (key, JSONValue(storage: storage, start: Int(member.valueStart), end: Int(member.valueEnd),
                            kind: member.kind, escaped: member.valueEscaped))
        }
    }

    /// The object's JSON text exactly as received.
    public var rawJSON: String { String(decoding: storage, as: UTF8.self) }
}

/// One JSON value inside a ``JSONObject``: a kind and a byte range, decoded on demand.
public struct JSONValue: Sendable {
    @usableFromInline let storage: [UInt8]
    @usableFromInline let start: Int
    @usableFromInline let end: Int
    public let kind: JSONKind
    @usableFromInline let escaped: Bool

    @usableFromInline
    init(storage: [UInt8], start: Int, end: Int, kind: JSONKind, escaped: Bool) {
        self.storage = storage
        self.start = start
        self.end = end
        self.kind = kind
        self.escaped = escaped
    }

    @inlinable
    func withBody<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        storage.withUnsafeBufferPointer { buffer in body(UnsafeBufferPointer(rebasing: buffer[start..<end])) }
    }

    /// The string value decoded, or nil when the value is not a string.
    public var string: String? {
        guard kind == .string else { return nil }
        return withBody { raw in
            let inner = UnsafeBufferPointer(rebasing: raw.dropFirst().dropLast())
            return escaped ? String(decoding: JSONReader.unescape(inner), as: UTF8.self) : String(decoding: inner, as: UTF8.self)
        }
    }

    /// The decoded UTF-8 bytes of a string value, or nil when the value is not a string.
    public var stringBytes: [UInt8]? {
        guard kind == .string else { return nil }
        return withBody { raw in
            let inner = UnsafeBufferPointer(rebasing: raw.dropFirst().dropLast())
            return escaped ? JSONReader.unescape(inner) : Array(inner)
        }
    }

    /// Whether this is a string equal to `expected`, compared without building a `String`.
    @inlinable
    public func stringEquals(_ expected: String) -> Bool {
        guard kind == .string else { return false }
        var expected = expected
        return expected.withUTF8 { want in
            withBody { raw in
                let inner = UnsafeBufferPointer(rebasing: raw[(raw.startIndex + 1)..<(raw.endIndex - 1)])
                if escaped { return JSONReader.unescape(inner).elementsEqual(want) }
                return bytesEqual(inner, want)
            }
        }
    }

    /// The number of Unicode scalars in a string value (0 for other kinds).
    public var unicodeScalarCount: Int {
        guard kind == .string else { return 0 }
        return withBody { raw in
            let inner = UnsafeBufferPointer(rebasing: raw[(raw.startIndex + 1)..<(raw.endIndex - 1)])
            if escaped { return String(decoding: JSONReader.unescape(inner), as: UTF8.self).unicodeScalars.count }
            // Valid UTF-8: count the bytes that start a scalar.
            var count = 0
            for byte in inner where byte & 0xC0 != 0x80 { count += 1 }
            return count
        }
    }

    /// Whether this is a string of zero length.
    public var isEmptyString: Bool { kind == .string && end - start == 2 }

    /// An integer value (no fraction, no exponent), or nil.
    public var int64: Int64? {
        guard kind == .integer else { return nil }
        return withBody { JSONReader.parseInteger($0) }
    }

    /// Any number as a Double, or nil for other kinds.
    public var double: Double? {
        switch kind {
        case .integer: return int64.map(Double.init)
        case .real: return withBody { JSONReader.parseReal($0) }
        default: return nil
        }
    }

    /// A boolean value, or nil.
    public var bool: Bool? {
        switch kind {
        case .true: return true
        case .false: return false
        default: return nil
        }
    }

    public var isNull: Bool { kind == .null }

    /// A nested object, sharing this document's storage; nil for other kinds.
    public var object: JSONObject? {
        guard kind == .object else { return nil }
        // Already validated when the document was read; this pass only indexes the members.
        return storage.withUnsafeBufferPointer { buffer -> JSONObject? in
            var reader = JSONReader(UnsafeBufferPointer(rebasing: buffer[..<end]), maxDepth: Int.max, capacity: 8)
            reader.index = start
            guard (try? reader.readObject(depth: 1, keep: true)) != nil else { return nil }
            return JSONObject(storage: storage, members: reader.scratch)
        }
    }

    /// The elements of an array; nil for other kinds.
    public var array: [JSONValue]? {
        guard kind == .array else { return nil }
        return storage.withUnsafeBufferPointer { buffer -> [JSONValue]? in
            var reader = JSONReader(UnsafeBufferPointer(rebasing: buffer[..<end]), maxDepth: Int.max, capacity: 0)
            reader.index = start + 1
            var values: [JSONValue] = []
            reader.skipWhitespace()
            if reader.index < end, buffer[reader.index] == UInt8(ascii: "]") { return values }
            while reader.index < end {
                reader.skipWhitespace()
                let valueStart = reader.index
                guard let (kind, escaped) = try? reader.readValue(depth: 1) else { return nil }
                values.append(JSONValue(storage: storage, start: valueStart, end: reader.index, kind: kind, escaped: escaped))
                reader.skipWhitespace()
                guard reader.index < end else { return nil }
                let c = buffer[reader.index]
                reader.index += 1
                if c == UInt8(ascii: "]") { break }
            }
            return values
        }
    }

    /// The value's JSON text exactly as received.
    public var rawJSON: String { withBody { String(decoding: $0, as: UTF8.self) } }
}

/// Byte-wise equality through memcmp: generic `elementsEqual` walks one element at a time.
@inlinable
func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    guard a.count > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
    return memcmp(pa, pb, a.count) == 0
}
