#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `Value` per thread: made from `initial` on the thread's first use, cleaned up (`cleanup`, then freed)
/// when the thread exits. The per-thread caches of the verification path (``HeaderMemo``, the verification
/// contexts of `VerifyContextCache`) keep their state here: no lock and no shared mutable state, since a value
/// is only ever touched by its own thread.
///
/// A `pthread_key_t` holds a retained cell per thread; the key's destructor releases it, and the cell's
/// `deinit` runs `cleanup`. A look-up is `pthread_getspecific` and one load.
final class ThreadLocal<Value>: @unchecked Sendable {
    // @unchecked: `initial` is only copied, and each thread's value is reached only through that thread's key.
    private let key: pthread_key_t
    private let initial: Value
    private let cleanup: @Sendable (UnsafeMutablePointer<Value>) -> Void

    /// - Parameter cleanup: frees what a thread's value holds (C objects…) when the thread exits.
    init(_ initial: Value, cleanup: @escaping @Sendable (UnsafeMutablePointer<Value>) -> Void = { _ in }) {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            guard let raw else { return }
            Unmanaged<AnyObject>.fromOpaque(raw).release()
        }
        precondition(status == 0, "pthread_key_create failed (\(status))")
        self.key = key
        self.initial = initial
        self.cleanup = cleanup
    }

    /// This thread's value, made on first use. Only this thread may use the pointer, and not after it exits.
    @inline(__always)
    func pointer() -> UnsafeMutablePointer<Value> {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Cell>.fromOpaque(raw)._withUnsafeGuaranteedRef { $0.value }
        }
        return makeCell()
    }

    @inline(never)
    private func makeCell() -> UnsafeMutablePointer<Value> {
        let cell = Cell(initial, cleanup)
        pthread_setspecific(key, Unmanaged.passRetained(cell).toOpaque())
        return cell.value
    }

    private final class Cell {
        let value: UnsafeMutablePointer<Value>
        let cleanup: @Sendable (UnsafeMutablePointer<Value>) -> Void

        init(_ initial: Value, _ cleanup: @escaping @Sendable (UnsafeMutablePointer<Value>) -> Void) {
            value = .allocate(capacity: 1)
            value.initialize(to: initial)
            self.cleanup = cleanup
        }

        deinit {
            cleanup(value)
            value.deinitialize(count: 1)
            value.deallocate()
        }
    }
}
