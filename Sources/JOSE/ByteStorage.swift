/// Bytes held in one heap object (its elements are tail-allocated, so there is a single allocation), shared
/// by the JSON documents that view them.
///
/// A token's three segments are decoded into one `ByteStorage` (header, payload, signature, in that order),
/// so that verifying a token allocates it once instead of once per segment; the header and claims are views
/// on it. Written only while it is being filled, before it is shared; immutable afterwards, which is why the
/// values holding one are `@unchecked Sendable` (ManagedBuffer itself is explicitly not `Sendable`).
@usableFromInline
final class ByteStorage: ManagedBuffer<Int, UInt8> {
    /// Uninitialised storage for `count` bytes; the caller fills it before sharing it.
    @inlinable
    static func make(count: Int) -> ByteStorage {
        unsafeDowncast(ByteStorage.create(minimumCapacity: count) { _ in count }, to: ByteStorage.self)
    }

    /// A copy of `bytes`.
    @usableFromInline
    static func copying(_ bytes: [UInt8]) -> ByteStorage {
        let storage = make(count: bytes.count)
        bytes.withUnsafeBufferPointer { source in
            if let from = source.baseAddress { storage.base.initialize(from: from, count: source.count) }
        }
        return storage
    }

    /// The first byte. Valid as long as the storage is alive (whoever reads through it holds a reference).
    @inlinable
    var base: UnsafeMutablePointer<UInt8> { withUnsafeMutablePointerToElements { $0 } }
}
