/// What a ``JSONDocument`` keeps besides its member table.
@usableFromInline
struct JSONDocumentInfo {
    /// Keeps the bytes that `base` points into alive.
    @usableFromInline let owner: ByteStorage
    /// Where the document's text starts; every offset in the member table is relative to it.
    @usableFromInline let base: UnsafePointer<UInt8>
    @usableFromInline let memberCount: Int
}

/// The member table of one JSON document (see `JSONMember`) and the bytes it indexes, shared by every
/// ``JSONObject`` and ``JSONValue`` that views the document. The table is tail-allocated, so a document is one
/// allocation; the bytes belong to a ``ByteStorage`` that may hold more than this document (a token's header,
/// payload and signature share one). Immutable once made, so the values that view it are `@unchecked Sendable`.
@usableFromInline
final class JSONDocument: ManagedBuffer<JSONDocumentInfo, JSONMember> {
    /// A document over the `owner` bytes at `base`, holding a copy of the members `reader` collected (the
    /// reader's table usually lives on the stack of the function that read the document).
    @usableFromInline
    static func make(owner: ByteStorage, base: UnsafePointer<UInt8>, reader: borrowing JSONReader) -> JSONDocument {
        let count = reader.count
        let table = UnsafePointer(reader.table)
        let document = unsafeDowncast(JSONDocument.create(minimumCapacity: count) { _ in
            JSONDocumentInfo(owner: owner, base: base, memberCount: count)
        }, to: JSONDocument.self)
        // JSONMember is a trivial type: the elements need no deinitialisation when the document goes away.
        document.withUnsafeMutablePointerToElements { $0.initialize(from: table, count: count) }
        return document
    }

    /// The first byte of the document's text. (Read through the header pointer: no exclusivity check.)
    @inlinable
    var base: UnsafePointer<UInt8> { withUnsafeMutablePointerToHeader { $0.pointee.base } }

    @inlinable
    var owner: ByteStorage { withUnsafeMutablePointerToHeader { $0.pointee.owner } }

    @inlinable
    var members: UnsafePointer<JSONMember> { withUnsafeMutablePointerToElements { UnsafePointer($0) } }

    @inlinable
    func withMembers<R>(_ body: (UnsafePointer<JSONMember>) -> R) -> R { body(members) }
}
