import Synchronization

#if IDTK_TSAN
internal import CJOSEShims
#endif

extension Mutex where Value: ~Copyable {
    /// `withLock`, visible to ThreadSanitizer.
    ///
    /// On Linux, `Synchronization.Mutex` takes and releases its lock inside the Swift runtime, which is not built
    /// with ThreadSanitizer: a sanitized build sees the guarded state written by two threads and no lock between
    /// them, and reports a race that is not there (shown with a two-thread counter on a plain `Mutex`). In builds
    /// made with `-DIDTK_TSAN` (scripts/sanitize thread), every critical section therefore also tells
    /// ThreadSanitizer that it acquires the mutex when it starts and releases it when it ends, so that a real
    /// race — state touched outside the lock — is still reported. Other builds call `withLock` and nothing else.
    @inline(__always)
    package borrowing func withCriticalSection<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if IDTK_TSAN
        // The mutex's own address names the lock. It is taken by a borrow of the mutex, not by an access to the
        // guarded value, which ThreadSanitizer would see before the acquire and report.
        let address = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
        return try withLock { (value: inout sending Value) throws(E) -> sending Result in
            __tsan_acquire(address)
            defer { __tsan_release(address) }
            return try body(&value)
        }
        #else
        return try withLock(body)
        #endif
    }
}
