internal import CLibCrypto

/// What a ``JSONDocument`` keeps besides its tail.
@usableFromInline
struct JSONDocumentInfo {
    /// Keeps the bytes that `base` points into alive; nil when they are in this document's own tail.
    @usableFromInline let owner: AnyObject?
    /// Where the document's text starts; every offset in the member table is relative to it.
    @usableFromInline let base: UnsafePointer<UInt8>
    /// The member table, in the tail (stable: the object never moves).
    @usableFromInline let table: UnsafeMutablePointer<JSONMember>
    /// A storage's own bytes, in the tail after the member room (`base` for a table).
    @usableFromInline let bytes: UnsafeMutablePointer<UInt8>
    /// The members the tail has room for before its bytes (0 for a document made from a reader's table, whose
    /// tail is all members).
    @usableFromInline let memberCapacity: Int
}

/// The member table of one JSON document (see `JSONMember`) and the bytes it indexes, shared by every
/// ``JSONObject`` and ``JSONValue`` that views the document. Immutable once made (or once its member area has
/// been filled, see below), so the values that view it are `@unchecked Sendable`.
///
/// Two shapes, each one allocation:
/// - a **table** made from a reader's members (``make(owner:base:reader:)``), viewing bytes another object owns;
/// - a **storage**: bytes in its own tail, after room for a member table and a one-time claim flag
///   (``storage(byteCount:memberCapacity:base:)``). A token's three decoded segments live in one; the first
///   reading of its claims indexes them into that room (``claimMemberArea()``) instead of allocating a table, so
///   verifying a token allocates once. Later readings, and documents with more members than the room holds,
///   get a table of their own.
@usableFromInline
final class JSONDocument: ManagedBuffer<JSONDocumentInfo, JSONMember> {
    /// A document over the `owner` bytes at `base`, holding a copy of the members `reader` collected (the
    /// reader's table usually lives on the stack of the function that read the document).
    @usableFromInline
    static func make(owner: AnyObject, base: UnsafePointer<UInt8>, reader: borrowing JSONReader) -> JSONDocument {
        let count = reader.count
        let table = UnsafePointer(reader.table)
        let document = unsafeDowncast(JSONDocument.create(minimumCapacity: count) { buffer in
            JSONDocumentInfo(owner: owner, base: base, table: buffer.withUnsafeMutablePointerToElements { $0 },
                             bytes: UnsafeMutablePointer(mutating: base), memberCapacity: 0)
        }, to: JSONDocument.self)
        // JSONMember is a trivial type: the elements need no deinitialisation when the document goes away.
        document.withUnsafeMutablePointerToElements { $0.initialize(from: table, count: count) }
        return document
    }

    /// Storage for `byteCount` uninitialised bytes (the caller fills them before sharing the storage), with
    /// room for `memberCapacity` members. `base` is the offset in the bytes of the document the member room
    /// indexes (a token's payload comes after its header).
    @usableFromInline
    static func storage(byteCount: Int, memberCapacity: Int, base: Int = 0) -> JSONDocument {
        let stride = MemoryLayout<JSONMember>.stride
        // One slot for the claim flag, the member room, then the bytes rounded up to whole slots.
        let slots = 1 + memberCapacity + (byteCount + stride - 1) / stride
        let document = unsafeDowncast(JSONDocument.create(minimumCapacity: slots) { buffer in
            let elements = buffer.withUnsafeMutablePointerToElements { $0 }
            let bytes = UnsafeMutableRawPointer(elements + 1 + memberCapacity).assumingMemoryBound(to: UInt8.self)
            return JSONDocumentInfo(owner: nil, base: UnsafePointer(bytes + base), table: elements + 1, bytes: bytes,
                                    memberCapacity: memberCapacity)
        }, to: JSONDocument.self)
        // The flag starts clear; it is written only through idtk_claim_once from here on.
        document.withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0).storeBytes(of: 0, as: Int32.self) }
        return document
    }

    /// A storage holding a copy of `bytes`, without member room.
    @usableFromInline
    static func copying(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONDocument {
        let document = storage(byteCount: bytes.count, memberCapacity: 0)
        if let from = bytes.baseAddress { document.bytes.initialize(from: from, count: bytes.count) }
        return document
    }

    /// The first byte of the document's text. (Read through the header pointer: no exclusivity check.)
    @inlinable
    var base: UnsafePointer<UInt8> { withUnsafeMutablePointerToHeader { $0.pointee.base } }

    /// The object that keeps the document's bytes alive: its owner, or itself for a storage.
    @inlinable
    var owner: AnyObject { withUnsafeMutablePointerToHeader { $0.pointee.owner } ?? self }

    /// A storage's own bytes (past the flag and the member room).
    @inlinable
    var bytes: UnsafeMutablePointer<UInt8> { withUnsafeMutablePointerToHeader { $0.pointee.bytes } }

    /// The member table: a table's whole tail, or a storage's member room.
    @inlinable
    var members: UnsafePointer<JSONMember> { withUnsafeMutablePointerToHeader { UnsafePointer($0.pointee.table) } }

    @inlinable
    func withMembers<R>(_ body: (UnsafePointer<JSONMember>) -> R) -> R { body(members) }

    /// The member room of a storage, with its capacity, for the one caller that wins it: nil for everyone
    /// after the first, and for a storage without room. The winner fills it before sharing any view of it.
    @usableFromInline
    func claimMemberArea() -> (table: UnsafeMutablePointer<JSONMember>, capacity: Int)? {
        let (table, capacity) = withUnsafeMutablePointerToHeader { ($0.pointee.table, $0.pointee.memberCapacity) }
        guard capacity > 0 else { return nil }
        // The flag is the slot before the room.
        return idtk_claim_once(UnsafeMutableRawPointer(table - 1)) == 1 ? (table, capacity) : nil
    }
}
