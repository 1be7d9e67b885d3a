/// A member name with its hash worked out once, for the names read from every token (`alg`, `kid`, `exp`,
/// `aud`, `sub`…): a look-up by `JSONKey` neither hashes the name again nor goes through `String`.
///
/// ```swift
/// static let exp = JSONKey("exp")
/// let value = claims[exp]
/// ```
public struct JSONKey: Sendable, Hashable {
    /// The name as written in a look-up (unescaped).
    public let name: String
    @usableFromInline let utf8: [UInt8]
    @usableFromInline let hash: UInt32

    public init(_ name: String) {
        self.name = name
        let utf8 = Array(name.utf8)
        self.utf8 = utf8
        self.hash = utf8.withUnsafeBufferPointer { JSONReader.keyHash($0) }
    }

    public static func == (lhs: JSONKey, rhs: JSONKey) -> Bool { lhs.utf8 == rhs.utf8 }
    public func hash(into hasher: inout Hasher) { hasher.combine(utf8) }

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
        return utf8.withUnsafeBufferPointer { name in
            member.keyEscaped ? JSONReader.unescape(body).elementsEqual(name) : bytesEqual(body, name)
        }
    }
}

extension JSONObject {
    /// The value of the member named `key`, or nil.
    @inlinable
    public subscript(key: JSONKey) -> JSONValue? {
        guard let position = key.index(in: document.members, first: first, base: document.base) else { return nil }
        return value(at: position)
    }

    /// Whether a member named `key` is present (whatever its value, `null` included).
    /// The kind of the value of the member named `key`, or nil when there is no such member. For checks of a
    /// claim's type: no ``JSONValue`` is made, so the document is not retained and released for it.
    @inlinable
    public func kind(of key: JSONKey) -> JSONKind? {
        let members = document.members
        guard let position = key.index(in: members, first: first, base: document.base) else { return nil }
        return members[position].kind
    }

    /// The number held by the member named `key`, read in place: for claims such as `exp` and `iat`, which are
    /// read from every token. No ``JSONValue`` is made, so the document is neither retained nor released.
    @inlinable
    public func number(_ key: JSONKey) -> JSONNumberMember {
        let members = document.members
        guard let position = key.index(in: members, first: first, base: document.base) else { return .missing }
        let member = members[position]
        let body = UnsafeBufferPointer(start: document.base + Int(member.valueStart),
                                       count: Int(member.valueEnd - member.valueStart))
        switch member.kind {
        // The reader refused integers outside Int64, so this parse cannot fail.
        case .integer: return JSONReader.parseInteger(body).map(JSONNumberMember.integer) ?? .notANumber(.integer)
        case .real: return JSONReader.parseReal(body).map(JSONNumberMember.real) ?? .notANumber(.real)
        default: return .notANumber(member.kind)
        }
    }

    /// The kind of the member named `key` and the length in bytes of its value's text as written (quotes
    /// included for a string), or nil when there is no such member. Like ``kind(of:)``, makes no ``JSONValue``.
    @inlinable
    public func kindAndTextLength(of key: JSONKey) -> (kind: JSONKind, length: Int)? {
        let members = document.members
        guard let position = key.index(in: members, first: first, base: document.base) else { return nil }
        let member = members[position]
        return (member.kind, Int(member.valueEnd - member.valueStart))
    }

    /// Calls `body` with the kind of the member named `key` and its value's text exactly as written (quotes and
    /// escapes included); nil when there is no such member. Makes no ``JSONValue``.
    @inlinable
    public func withRawValue<R>(_ key: JSONKey, _ body: (JSONKind, UnsafeBufferPointer<UInt8>) -> R) -> R? {
        let members = document.members
        let base = document.base
        guard let position = key.index(in: members, first: first, base: base) else { return nil }
        let member = members[position]
        return body(member.kind, UnsafeBufferPointer(start: base + Int(member.valueStart),
                                                     count: Int(member.valueEnd - member.valueStart)))
    }

    /// Calls `body` with the decoded UTF-8 bytes of the string held by the member named `key`, read in place
    /// unless it holds escapes; nil when there is no such member or it is not a string. Makes no ``JSONValue``.
    @inlinable
    public func withString<R>(_ key: JSONKey, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        let members = document.members
        let base = document.base
        guard let position = key.index(in: members, first: first, base: base) else { return nil }
        let member = members[position]
        guard member.kind == .string else { return nil }
        let inner = UnsafeBufferPointer(start: base + Int(member.valueStart) + 1,
                                        count: Int(member.valueEnd - member.valueStart) - 2)
        if member.valueEscaped { return JSONReader.unescape(inner).withUnsafeBufferPointer(body) }
        return body(inner)
    }

    /// Whether the member named `key` is a string equal to one of `candidates`, compared in place (no
    /// ``JSONValue`` or `String` is made): nil when there is no such member, false when it is not a string or
    /// matches none of them.
    @inlinable
    public func string(_ key: JSONKey, isOneOf candidates: [String]) -> Bool? {
        let members = document.members
        let base = document.base
        guard let position = key.index(in: members, first: first, base: base) else { return nil }
        let member = members[position]
        guard member.kind == .string else { return false }
        let inner = UnsafeBufferPointer(start: base + Int(member.valueStart) + 1,
                                        count: Int(member.valueEnd - member.valueStart) - 2)
        if member.valueEscaped {
            let decoded = JSONReader.unescape(inner)
            return candidates.contains { $0.utf8.elementsEqual(decoded) }
        }
        return candidates.withUnsafeBufferPointer { candidates in
            for candidate in candidates {
                let equal = candidate.utf8.withContiguousStorageIfAvailable { bytesEqual(inner, $0) }
                    ?? candidate.utf8.elementsEqual(inner)
                if equal { return true }
            }
            return false
        }
    }

    @inlinable
    public func contains(_ key: JSONKey) -> Bool {
        key.index(in: document.members, first: first, base: document.base) != nil
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
}
