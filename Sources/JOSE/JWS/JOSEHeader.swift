/// A token's protected header, read but not trusted.
///
/// Verification needs only `alg` and `kid`, which are located when the token is split; the header as a
/// ``JSONObject`` is indexed only when somebody asks for ``object``. Immutable (its bytes are never written
/// after the split), hence `@unchecked Sendable`.
public struct JOSEHeader: @unchecked Sendable {
    /// The decoded segments of the token; the header's JSON text is the first `count` bytes.
    @usableFromInline let storage: JSONDocument
    @usableFromInline let count: Int32
    /// The `kid` value's text (quotes included) as a range of the header, or -1 when there is no `kid`.
    @usableFromInline let kidStart: Int32
    @usableFromInline let kidEnd: Int32
    @usableFromInline let kidEscaped: Bool
    /// The algorithm the header names, when it is one this library implements.
    public let algorithm: JWSAlgorithm?

    /// The whole header object.
    public var object: JSONObject {
        // The header was read by the same reader when the token was split, with a depth limit no larger than
        // the ceiling used here, so reading it again cannot fail.
        (try? JSONObject.parse(owner: storage, base: storage.bytes, count: Int(count), maxDepth: JSONObject.depthCeiling))!
    }

    /// The `alg` value as written (for messages), or nil if absent or not a string.
    public var algorithmName: String? { object["alg"]?.string }
    /// The `kid` value, or nil if absent.
    public var kid: String? {
        withKid { kid in kid.map { String(decoding: $0, as: UTF8.self) } }
    }
    /// Whether the header has a `kid`.
    public var hasKid: Bool { kidStart >= 0 }
    /// The `typ` value, or nil if absent.
    public var type: String? { object["typ"]?.string }

    /// Calls `body` with the `kid` value's UTF-8 bytes (unescaped), or nil when there is no `kid`.
    @inlinable
    package func withKid<R>(_ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard kidStart >= 0 else { return body(nil) }
        let inner = UnsafeBufferPointer(start: storage.bytes + Int(kidStart) + 1, count: Int(kidEnd - kidStart) - 2)
        if kidEscaped { return JSONReader.unescape(inner).withUnsafeBufferPointer { body($0) } }
        return body(inner)
    }
}
