#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON object read strictly (see `JSONObject.parse(_:maxDepth:)`), holding its own UTF-8 bytes.
///
/// Members are indexed as byte ranges by the one pass that validates the document, nested objects included;
/// each value is decoded only when it is asked for. Nested objects are views on the same document, so reading
/// `firebase.sign_in_provider` neither copies nor reads anything again.
public struct JSONObject: @unchecked Sendable {
    @usableFromInline let document: JSONDocument
    /// The index of the first member in the document's table, or -1 for an empty object.
    @usableFromInline let first: Int32
    /// The object's own text, from `{` to `}`.
    @usableFromInline let start: Int32
    @usableFromInline let end: Int32

    /// The default nesting limit for token headers and claims. Real ID tokens nest three or four levels.
    public static let defaultMaxDepth = 32

    /// The deepest nesting ever read, whatever `maxDepth` a caller passes: 2048, Jansson's own limit
    /// (`JSON_PARSER_MAX_DEPTH`). The reader recurses once per level; without a ceiling, a caller who raised
    /// the limit would let a document of nested brackets exhaust the thread's stack and crash the process
    /// (a debug build crashed between 3,900 and 5,000 levels on a Swift concurrency thread).
    public static let depthCeiling = 2048

    @usableFromInline init(document: JSONDocument, first: Int32, start: Int32, end: Int32) {
        self.document = document
        self.first = first
        self.start = start
        self.end = end
    }

    /// Parses `bytes`, which must be exactly one JSON object (surrounding whitespace allowed), nested at most
    /// `maxDepth` levels deep (capped at ``depthCeiling``). Levels count values as Jansson does: the object is
    /// level 1, its members' values level 2, and so on, scalars included.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSONObject {
        let storage = bytes.withUnsafeBufferPointer { JSONDocument.copying($0) }
        return try parse(owner: storage, base: storage.bytes, count: bytes.count, maxDepth: maxDepth)
    }

    /// Parses the `count` bytes at `base`, which `owner` keeps alive; the object is a view on them.
    @usableFromInline
    static func parse(owner: AnyObject, base: UnsafePointer<UInt8>, count: Int,
                      maxDepth: Int) throws(JSONSyntaxError) -> JSONObject {
        try checkSize(count)
        return try JSONReader.withReader(UnsafeBufferPointer(start: base, count: count), maxDepth: maxDepth) {
            (reader: inout JSONReader) throws(JSONSyntaxError) -> JSONObject in
            try read(&reader, base: base, count: count) { JSONDocument.make(owner: owner, base: base, reader: $0) }
        }
    }

    /// Parses the `count` bytes at `storage.base` into the member room `table` (`capacity` members) that the
    /// caller won from `storage` (``JSONDocument/claimMemberArea()``): the object is a view on the storage
    /// itself, with no table of its own, unless the document has more members than the room holds.
    @usableFromInline
    static func parse(in storage: JSONDocument, count: Int, maxDepth: Int, table: UnsafeMutablePointer<JSONMember>,
                      capacity: Int) throws(JSONSyntaxError) -> JSONObject {
        try checkSize(count)
        let base = storage.base
        var reader = JSONReader(UnsafeBufferPointer(start: base, count: count), maxDepth: maxDepth, table: table,
                                capacity: capacity)
        defer { reader.release() }
        return try read(&reader, base: base, count: count) { reader in
            // Outgrown: the members moved to the heap, and get a document of their own like any other reading.
            reader.tableOnHeap ? JSONDocument.make(owner: storage, base: base, reader: reader) : storage
        }
    }

    /// The member table stores offsets as Int32: larger documents are refused before the reader sees them.
    @usableFromInline
    static func checkSize(_ count: Int) throws(JSONSyntaxError) {
        guard count <= JSONReader.maxDocumentBytes else {
            throw JSONSyntaxError(reason: "JSON document larger than 2 GiB", offset: 0)
        }
    }

    /// Reads the whole document (one object, whitespace around it) with `reader`, and views it through the
    /// document `keeping` makes from the reader's members.
    @usableFromInline
    static func read(_ reader: inout JSONReader, base: UnsafePointer<UInt8>, count: Int,
                     keeping: (JSONReader) -> JSONDocument) throws(JSONSyntaxError) -> JSONObject {
        reader.skipWhitespace()
        let start = Int32(reader.index)
        let first = try reader.readTopLevelObject()
        var end = count
        while end > 0, base[end - 1] <= 0x20 { end -= 1 }
        return JSONObject(document: keeping(reader), first: first, start: start, end: Int32(end))
    }

    /// Parses a string holding one JSON object.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSONObject {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    /// The table indexes of the members, in document order.
    @usableFromInline
    var memberIndexes: [Int] {
        document.withMembers { table in
            var indexes: [Int] = []
            var k = Int(first)
            while k >= 0 {
                indexes.append(k)
                k = Int(table[k].next)
            }
            return indexes
        }
    }

    /// The number of members.
    public var count: Int { memberIndexes.count }

    /// The member names, in document order.
    public var keys: [String] {
        let base = document.base
        return document.withMembers { table in
            memberIndexes.map { k in
                let member = table[k]
                let body = UnsafeBufferPointer(start: base + Int(member.keyStart), count: Int(member.keyEnd - member.keyStart))
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
            return value(at: position)
        }
    }

    @usableFromInline
    func value(at position: Int) -> JSONValue {
        let member = document.members[position]
        return JSONValue(document: document, start: Int(member.valueStart), end: Int(member.valueEnd), kind: member.kind,
                         escaped: member.valueEscaped, firstChild: member.firstChild, indexed: true)
    }

    /// Whether a member named `key` is present (whatever its value, `null` included).
    @inlinable
    public func contains(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { index(of: $0) != nil }
    }

    @usableFromInline
    func index(of name: UnsafeBufferPointer<UInt8>) -> Int? {
        let hash = JSONReader.keyHash(name)
        let table = document.members
        var k = Int(first)
        while k >= 0 {
            let member = table[k]
            if member.keyHash == hash, keyEquals(member, name) { return k }
            k = Int(member.next)
        }
        return nil
    }

    @usableFromInline
    func keyEquals(_ member: JSONMember, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let body = UnsafeBufferPointer(start: document.base + Int(member.keyStart), count: Int(member.keyEnd - member.keyStart))
        return member.keyEscaped ? JSONReader.unescape(body).elementsEqual(name) : bytesEqual(body, name)
    }

    /// Every member as (name, value), in document order.
    public var entries: [(key: String, value: JSONValue)] {
        zip(keys, memberIndexes).map { key, k in (key, value(at: k)) }
    }

    /// The object's JSON text exactly as received.
    public var rawJSON: String {
        String(decoding: UnsafeBufferPointer(start: document.base + Int(start), count: Int(end - start)), as: UTF8.self)
    }
}

/// One JSON value inside a ``JSONObject``: a kind and a byte range, decoded on demand.
public struct JSONValue: @unchecked Sendable {
    @usableFromInline let document: JSONDocument
    @usableFromInline let start: Int
    @usableFromInline let end: Int
    /// The value's kind.
    public let kind: JSONKind
    @usableFromInline let escaped: Bool
    /// For an object that is a member's value: its first member in the document's table (-1 if empty).
    @usableFromInline let firstChild: Int32
    /// Whether `firstChild` is known: false for values inside arrays, whose objects are not indexed.
    @usableFromInline let indexed: Bool

    @usableFromInline
    init(document: JSONDocument, start: Int, end: Int, kind: JSONKind, escaped: Bool, firstChild: Int32, indexed: Bool) {
        self.document = document
        self.start = start
        self.end = end
        self.kind = kind
        self.escaped = escaped
        self.firstChild = firstChild
        self.indexed = indexed
    }

    @inlinable
    func withBody<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: document.base + start, count: end - start))
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

    /// Calls `body` with the decoded UTF-8 bytes of a string value, read in place unless the string holds
    /// escapes; nil when the value is not a string.
    @inlinable
    package func withStringBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard kind == .string else { return nil }
        return withBody { raw in
            let inner = UnsafeBufferPointer(rebasing: raw[(raw.startIndex + 1)..<(raw.endIndex - 1)])
            if escaped { return JSONReader.unescape(inner).withUnsafeBufferPointer { body($0) } }
            return body(inner)
        }
    }

    /// Whether this is a string equal to `expected`, compared without building a `String`.
    @inlinable
    public func stringEquals(_ expected: String) -> Bool {
        withStringBytes { actual in expected.withBorrowedUTF8 { bytesEqual(actual, $0) } } ?? false
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

    /// An upper bound on the UTF-8 length of a string value: its length as written, escapes included, which
    /// decoding never lengthens (0 for other kinds).
    public var utf8ByteCountBound: Int { kind == .string ? end - start - 2 : 0 }

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

    /// Whether the value is `null`.
    public var isNull: Bool { kind == .null }

    /// A nested object, a view on the same document; nil for other kinds.
    public var object: JSONObject? {
        guard kind == .object else { return nil }
        if indexed { return JSONObject(document: document, first: firstChild, start: Int32(start), end: Int32(end)) }
        // An object inside an array was validated but not indexed: index it now, sharing the bytes.
        let document = self.document
        let base = document.base
        return JSONReader.withReader(UnsafeBufferPointer(start: base, count: end), maxDepth: JSONObject.depthCeiling) { reader -> JSONObject? in
            reader.index = start
            guard let first = try? reader.readObject(depth: 1) else { return nil }
            return JSONObject(document: JSONDocument.make(owner: document.owner, base: base, reader: reader), first: first,
                              start: Int32(start), end: Int32(end))
        }
    }

    /// The elements of an array; nil for other kinds.
    public var array: [JSONValue]? {
        guard kind == .array else { return nil }
        let document = self.document
        let base = document.base
        return JSONReader.withReader(UnsafeBufferPointer(start: base, count: end), maxDepth: JSONObject.depthCeiling) { reader -> [JSONValue]? in
            reader.index = start + 1
            var values: [JSONValue] = []
            reader.skipWhitespace()
            if reader.index < end, base[reader.index] == UInt8(ascii: "]") { return values }
            while reader.index < end {
                reader.skipWhitespace()
                let valueStart = reader.index
                guard let (kind, escaped) = try? reader.readValue(depth: 1) else { return nil }
                reader.count = 0
                values.append(JSONValue(document: document, start: valueStart, end: reader.index, kind: kind,
                                        escaped: escaped, firstChild: -1, indexed: false))
                reader.skipWhitespace()
                guard reader.index < end else { return nil }
                let c = base[reader.index]
                reader.index += 1
                if c == UInt8(ascii: "]") { break }
            }
            return values
        }
    }

    /// The value's JSON text exactly as received.
    public var rawJSON: String { withBody { String(decoding: $0, as: UTF8.self) } }
}

/// Byte-wise equality. Up to sixteen bytes (member names, most claim values) compared with two overlapping
/// loads from each side, all within the buffers; longer ones through memcmp. Generic `elementsEqual` walks one
/// element at a time, and a call to memcmp costs more than the comparison for short names.
@inlinable
func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    let n = a.count
    guard n == b.count else { return false }
    guard n > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
    let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb)
    if n >= 8 {
        guard n <= 16 else { return memcmp(pa, pb, n) == 0 }
        return ra.loadUnaligned(as: UInt64.self) == rb.loadUnaligned(as: UInt64.self)
            && ra.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self) == rb.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
    }
    if n >= 4 {
        return ra.loadUnaligned(as: UInt32.self) == rb.loadUnaligned(as: UInt32.self)
            && ra.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self) == rb.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
    }
    // One to three bytes: the first, the middle and the last cover them all.
    return pa[0] == pb[0] && pa[n >> 1] == pb[n >> 1] && pa[n &- 1] == pb[n &- 1]
}
