#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibCrypto
import Synchronization

/// Each thread's own verification contexts for the keys it used last, so that a verification reuses a
/// context instead of duplicating the key's prepared one (`EVP_PKEY_CTX_dup` + `EVP_PKEY_CTX_free`: about
/// 1,400 instructions and three allocations, against a few dozen for the look-up).
///
/// The cache is thread-local (``ThreadLocal``), so there is no lock and no shared mutable state: a context
/// is only ever used by the thread that holds it, one verification at a time. Entries are keyed by
/// ``PublicKey/contextID``, a number never reused within the process, so a key freed and another allocated at
/// the same address can never be served the old key's context. A context holds a reference to its key's
/// `EVP_PKEY`, so a cached context stays valid after its `PublicKey` is gone; it is freed when the slot is
/// reused or when the thread exits. A context is dropped after a failed verification, so that a failure never
/// leaves state behind for the next token.
enum VerifyContextCache {
    /// Contexts kept per thread: a verifier typically uses one to three keys per provider at a time.
    static let slotCount = 8

    struct Slot {
        var id: UInt64
        var ctx: OpaquePointer?
    }

    struct Slots {
        var next: Int
        /// Signatures this thread has checked with libcrypto: see ``signatureChecksOnThisThread``.
        var checks: Int
        var slots: (Slot, Slot, Slot, Slot, Slot, Slot, Slot, Slot)
    }

    /// This thread's slots; a thread's contexts are freed when it exits.
    static let perThread = ThreadLocal(
        Slots(next: 0, checks: 0, slots: (Slot(id: 0, ctx: nil), Slot(id: 0, ctx: nil), Slot(id: 0, ctx: nil), Slot(id: 0, ctx: nil),
                                          Slot(id: 0, ctx: nil), Slot(id: 0, ctx: nil), Slot(id: 0, ctx: nil), Slot(id: 0, ctx: nil)))
    ) { slots in
        withUnsafeMutableBytes(of: &slots.pointee.slots) { bytes in
            for slot in bytes.bindMemory(to: Slot.self) { if let ctx = slot.ctx { EVP_PKEY_CTX_free(ctx) } }
        }
    }

    /// This thread's slots, created on first use.
    @inline(__always)
    static func threadSlots() -> UnsafeMutablePointer<Slots> { perThread.pointer() }

    /// Runs `body` with a verification context for `key` that only this thread uses; returns nil when
    /// libcrypto cannot make one. When `body` returns false (the signature did not verify), the context is
    /// freed rather than kept.
    static func withContext(for key: PublicKey, _ body: (OpaquePointer) -> Bool) -> Bool {
        let slots = threadSlots()
        return withUnsafeMutableBytes(of: &slots.pointee.slots) { bytes -> Bool in
            let table = bytes.bindMemory(to: Slot.self)
            var index = -1
            for k in 0..<slotCount where table[k].id == key.contextID {
                index = k
                break
            }
            if index < 0 {
                guard let ctx = EVP_PKEY_CTX_dup(key.prepared) else { return false }
                index = slots.pointee.next
                slots.pointee.next = (index + 1) % slotCount
                if let old = table[index].ctx { EVP_PKEY_CTX_free(old) }
                table[index] = Slot(id: key.contextID, ctx: ctx)
            }
            let ctx = table[index].ctx!
            slots.pointee.checks &+= 1
            let ok = body(ctx)
            if !ok {
                EVP_PKEY_CTX_free(ctx)
                table[index] = Slot(id: 0, ctx: nil)
            }
            return ok
        }
    }

    /// How many signatures the calling thread has checked with libcrypto so far: lets tests assert how often a
    /// caller (an audit routing a token between profiles) verifies a signature. Counted in the thread's slots,
    /// which every verification reads anyway: no shared counter, no atomic.
    static var signatureChecksOnThisThread: Int { threadSlots().pointee.checks }

    /// Numbers for ``PublicKey/contextID``; 0 marks an empty slot.
    static let lastID = Atomic<UInt64>(0)

    static func newID() -> UInt64 { lastID.add(1, ordering: .relaxed).newValue }
}

extension PublicKey {
    /// How many signatures the calling thread has checked with libcrypto so far (any key): for tests that count
    /// the signature verifications a piece of work costs.
    package static var signatureChecksOnThisThread: Int { VerifyContextCache.signatureChecksOnThisThread }
}
