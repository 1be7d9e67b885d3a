/// A member name with its hash worked out once, for the names read from every token (`alg`, `kid`, `exp`,
/// `aud`, `sub`…): a look-up by `JSONKey` neither hashes the name again nor goes through `String`.
///
/// ```swift
/// static let exp = JSONKey("exp")
/// let value = claims[exp]
/// ```
public struct JSONKey: Sendable, Hashable {
    /// A name of up to this many UTF-8 bytes is held in the key itself (every claim name the profiles read is).
    @usableFromInline static let inlineCapacity = 32
    /// A name held inline, as the words a comparison loads from a candidate of the same length: the first and last
    /// eight bytes (four, under eight bytes), and for a name over sixteen bytes the second eight and the eight before
    /// the last, which together cover every byte; a name under four bytes is packed into the first word. Kept in
    /// the value, not in an array: the claims' keys are globals that every thread reads, and a key copied on a
    /// verification would otherwise retain and release one shared array, an atomic operation on a cache line that
    /// the threads pass between them.
    @usableFromInline let words: (UInt64, UInt64, UInt64, UInt64)
    /// A longer name's bytes; nil for a name held inline (whose copy then touches no reference count).
    @usableFromInline let long: [UInt8]?
    @usableFromInline let count: Int
    @usableFromInline let hash: UInt32

    /// A key for the member named `name`.
    public init(_ name: String) {
        let bytes = Array(name.utf8)
        count = bytes.count
        hash = bytes.withUnsafeBufferPointer { JSONReader.keyHash($0) }
        if bytes.count <= JSONKey.inlineCapacity {
            words = bytes.withUnsafeBufferPointer { JSONKey.words(of: $0) }
            long = nil
        } else {
            words = (0, 0, 0, 0)
            long = bytes
        }
    }

    /// The comparison words of a name of at most ``inlineCapacity`` bytes (see `words`).
    private static func words(of name: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64, UInt64, UInt64) {
        let n = name.count
        guard n >= 4, let p = name.baseAddress else { return (packed(name), 0, 0, 0) }
        let raw = UnsafeRawPointer(p)
        if n < 8 {
            return (UInt64(raw.loadUnaligned(as: UInt32.self)), 0, 0, UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)))
        }
        let first = raw.loadUnaligned(as: UInt64.self), last = raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        guard n > 16 else { return (first, 0, 0, last) }
        return (first, raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self), raw.loadUnaligned(fromByteOffset: n - 16, as: UInt64.self), last)
    }

    /// The bytes of a name under four bytes, the first in the lowest eight bits.
    @usableFromInline
    static func packed(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var word: UInt64 = 0
        for k in name.indices { word |= UInt64(name[k]) << UInt64(8 * k) }
        return word
    }

    /// The name as written in a look-up (unescaped).
    public var name: String {
        if let long { return String(decoding: long, as: UTF8.self) }
        let n = count
        return String(unsafeUninitializedCapacity: n) { out in
            guard n >= 4, let p = out.baseAddress else {
                for k in 0..<n { out[k] = UInt8(truncatingIfNeeded: words.0 >> UInt64(8 * k)) }
                return n
            }
            let raw = UnsafeMutableRawPointer(p)
            if n < 8 {
                raw.storeBytes(of: UInt32(truncatingIfNeeded: words.0), as: UInt32.self)
                raw.storeBytes(of: UInt32(truncatingIfNeeded: words.3), toByteOffset: n - 4, as: UInt32.self)
                return n
            }
            raw.storeBytes(of: words.0, as: UInt64.self)
            if n > 16 {
                raw.storeBytes(of: words.1, toByteOffset: 8, as: UInt64.self)
                raw.storeBytes(of: words.2, toByteOffset: n - 16, as: UInt64.self)
            }
            raw.storeBytes(of: words.3, toByteOffset: n - 8, as: UInt64.self)
            return n
        }
    }

    public static func == (lhs: JSONKey, rhs: JSONKey) -> Bool {
        lhs.count == rhs.count && lhs.words == rhs.words && lhs.long == rhs.long
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
        hasher.combine(long)
    }

    /// Whether `name` (unescaped UTF-8) is this name.
    @inlinable
    package func isName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard name.count == count else { return false }
        return name.baseAddress.map { equals($0) } ?? true
    }

    /// Whether the `count` bytes at `p` are this name: a few word loads for a name held inline.
    @inlinable
    func equals(_ p: UnsafePointer<UInt8>) -> Bool {
        let n = count
        if let long { return long.withUnsafeBufferPointer { bytesEqual($0, UnsafeBufferPointer(start: p, count: n)) } }
        let raw = UnsafeRawPointer(p)
        if n >= 8 {
            guard raw.loadUnaligned(as: UInt64.self) == words.0,
                  raw.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self) == words.3 else { return false }
            return n <= 16 || (raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == words.1
                               && raw.loadUnaligned(fromByteOffset: n &- 16, as: UInt64.self) == words.2)
        }
        if n >= 4 {
            return UInt64(raw.loadUnaligned(as: UInt32.self)) == words.0
                && UInt64(raw.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)) == words.3
        }
        return JSONKey.packed(UnsafeBufferPointer(start: p, count: n)) == words.0
    }

    /// The index in `table` of the member of the object whose first member is `first` that has this name, or
    /// nil. Equal hashes are confirmed on the bytes (after unescaping, for a name written with escapes).
    @inlinable
    func index(in table: UnsafePointer<JSONMember>, first: Int32, base: UnsafePointer<UInt8>) -> Int? {
        var k = Int(first)
        while k >= 0 {
            if table[k].keyHash == hash, matches(table[k], base: base) { return k }
            k = Int(table[k].next)
        }
        return nil
    }

    @usableFromInline
    func matches(_ member: JSONMember, base: UnsafePointer<UInt8>) -> Bool {
        let body = UnsafeBufferPointer(start: base + Int(member.keyStart), count: Int(member.keyEnd - member.keyStart))
        if member.keyEscaped { return JSONReader.unescape(body).withUnsafeBufferPointer { isName($0) } }
        return body.count == count && equals(body.baseAddress!)
    }
}

extension JSONObject {
    /// The member named `key` in the member table, or nil. Every look-up below goes through it: none makes a
    /// ``JSONValue``, so the document is neither retained nor released.
    @inlinable
    func member(_ key: JSONKey) -> JSONMember? {
        let members = document.members
        guard let position = key.index(in: members, first: first, base: document.base) else { return nil }
        return members[position]
    }

    /// A member value's text exactly as written (quotes and escapes included).
    @inlinable
    func text(of member: JSONMember) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: document.base + Int(member.valueStart), count: Int(member.valueEnd - member.valueStart))
    }

    /// Calls `body` with a string member's decoded UTF-8 bytes, in place unless the string holds escapes.
    @inlinable
    func withStringBytes<R, E: Error>(of member: JSONMember, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        let quoted = text(of: member)
        let inner = UnsafeBufferPointer(rebasing: quoted[(quoted.startIndex + 1)..<(quoted.endIndex - 1)])
        if member.valueEscaped { return try JSONReader.unescape(inner).withUnsafeBufferPointer(body) }
        return try body(inner)
    }

    /// The value of the member named `key`, or nil.
    @inlinable
    public subscript(key: JSONKey) -> JSONValue? {
        guard let position = key.index(in: document.members, first: first, base: document.base) else { return nil }
        return value(at: position)
    }

    /// The kind of the value of the member named `key`, or nil when there is no such member. For checks of a
    /// claim's type.
    @inlinable
    public func kind(of key: JSONKey) -> JSONKind? { member(key)?.kind }

    /// The number held by the member named `key`, read in place: for claims such as `exp` and `iat`, which are
    /// read from every token.
    @inlinable
    public func number(_ key: JSONKey) -> JSONNumberMember {
        guard let member = member(key) else { return .missing }
        switch member.kind {
        // The reader refused integers outside Int64, so this parse cannot fail.
        case .integer: return JSONReader.parseInteger(text(of: member)).map(JSONNumberMember.integer) ?? .notANumber(.integer)
        case .real: return JSONReader.parseReal(text(of: member)).map(JSONNumberMember.real) ?? .notANumber(.real)
        default: return .notANumber(member.kind)
        }
    }

    /// The kind of the member named `key` and the length in bytes of its value's text as written (quotes
    /// included for a string), or nil when there is no such member.
    @inlinable
    public func kindAndTextLength(of key: JSONKey) -> (kind: JSONKind, length: Int)? {
        member(key).map { ($0.kind, Int($0.valueEnd - $0.valueStart)) }
    }

    /// Calls `body` with the kind of the member named `key` and its value's text exactly as written (quotes and
    /// escapes included); nil when there is no such member.
    @inlinable
    package func withRawValue<R>(_ key: JSONKey, _ body: (JSONKind, UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let member = member(key) else { return nil }
        return body(member.kind, text(of: member))
    }

    /// Calls `body` with the decoded UTF-8 bytes of the string held by the member named `key`, read in place
    /// unless it holds escapes; nil when there is no such member or it is not a string.
    @inlinable
    package func withString<R>(_ key: JSONKey, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let member = member(key), member.kind == .string else { return nil }
        return withStringBytes(of: member, body)
    }

    /// Whether the member named `key` is a string equal to one of `candidates`, compared in place (no `String`
    /// is made): nil when there is no such member, false when it is not a string or matches none of them.
    @inlinable
    public func string(_ key: JSONKey, isOneOf candidates: [String]) -> Bool? {
        guard let member = member(key) else { return nil }
        guard member.kind == .string else { return false }
        return withStringBytes(of: member) { actual in
            // Through the array's buffer: the elements are not copied out. Each candidate's storage is still retained
            // and released around its comparison by the standard library's UTF-8 access (an atomic operation on a
            // string every thread verifying with this profile shares).
            candidates.withUnsafeBufferPointer { candidates in
                for candidate in candidates where candidate.withBorrowedUTF8({ bytesEqual(actual, $0) }) { return true }
                return false
            }
        }
    }

    /// Whether the object has a member named by `key`.
    @inlinable
    public func contains(_ key: JSONKey) -> Bool { member(key) != nil }

    /// The object held by the member named `key`, as a view on the same document; nil when there is no such
    /// member or its value is not an object (see ``kind(of:)``). No ``JSONValue`` is made on the way.
    @inlinable
    public func object(_ key: JSONKey) -> JSONObject? {
        guard let member = member(key), member.kind == .object else { return nil }
        return JSONObject(document: document, first: member.firstChild, start: member.valueStart, end: member.valueEnd)
    }

    /// Calls `body` with each member's name (its UTF-8 bytes, unescaped), kind and value text exactly as written
    /// (quotes and escapes included), in document order, in one walk over the members: for checks that look at
    /// several members of an object, where a look-up per name would walk the members once per name (and to the
    /// end for each name that is absent).
    ///
    /// With `decodingStrings`, a string value is passed as its decoded UTF-8 bytes instead (no quotes, escapes
    /// resolved; in place unless it holds escapes), as ``withString(_:_:)`` would lend it: for readers of
    /// several claims' values at once. A value passed as written points into the document itself, and stays valid
    /// as long as the document does (a decoded string or an unescaped name only during the call).
    @inlinable
    package func forEachMember<E: Error>(decodingStrings: Bool = false,
                                         _ body: (UnsafeBufferPointer<UInt8>, JSONKind, UnsafeBufferPointer<UInt8>) throws(E) -> Void) throws(E) {
        let members = document.members
        let base = document.base
        var k = Int(first)
        while k >= 0 {
            let member = members[k]
            let name = UnsafeBufferPointer(start: base + Int(member.keyStart), count: Int(member.keyEnd - member.keyStart))
            func visit(_ value: UnsafeBufferPointer<UInt8>) throws(E) {
                try withUnescapedName(name, member.keyEscaped) { (name) throws(E) in try body(name, member.kind, value) }
            }
            if decodingStrings, member.kind == .string { try withStringBytes(of: member, visit) } else { try visit(text(of: member)) }
            k = Int(member.next)
        }
    }

    /// A member's name as ``forEachMember(decodingStrings:_:)`` passes it: unescaped.
    @inlinable
    func withUnescapedName<E: Error>(_ name: UnsafeBufferPointer<UInt8>, _ escaped: Bool,
                                     _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> Void) throws(E) {
        if escaped {
            try JSONReader.unescape(name).withUnsafeBufferPointer { (unescaped) throws(E) in try body(unescaped) }
        } else {
            try body(name)
        }
    }
}

extension String {
    /// Calls `body` with the string's UTF-8 bytes: a native string lends them in place; only a bridged one is
    /// copied first (`withUTF8` alone needs a mutable copy, which costs a retain and a release every call).
    @inlinable
    package func withBorrowedUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return copy.withUTF8(body)
    }
}

/// What ``JSONObject/number(_:)`` found under a name.
public enum JSONNumberMember: Sendable, Equatable {
    /// No member has that name.
    case missing
    /// An integer (no fraction, no exponent).
    case integer(Int64)
    /// A number with a fraction or an exponent.
    case real(Double)
    /// The member holds something else (a string, `null`…), of this kind.
    case notANumber(JSONKind)

    /// The number, an integer converted: nil when the member is missing or not a number.
    public var double: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        case .missing, .notANumber: return nil
        }
    }
}
