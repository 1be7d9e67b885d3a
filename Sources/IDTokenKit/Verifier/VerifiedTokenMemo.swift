import Synchronization

/// What a service derives from a verified token once and reuses while the verified-token cache holds the token:
/// `idtoken serve`'s identity headers, rendered on the first answer to the token once it is cached and written as
/// they are on every later one. A cached ``VerifiedToken`` carries one (``VerifiedToken/memo``); a token verified
/// afresh (the cache's miss itself, or a verifier without a cache) has none.
///
/// Set at most once (the first value kept wins, so two threads answering the same token at once keep one of their
/// equal renderings) and read without a lock. The value lives as long as the token's cache entry.
package final class VerifiedTokenMemo: @unchecked Sendable {
    // @unchecked: the slot is an atomic reference that is written once (compare-and-exchange from nil) and released
    // only in deinit; the values kept are Sendable.
    private let slot = Atomic<Unmanaged<AnyObject>?>(nil)

    package init() {}

    deinit { slot.load(ordering: .acquiring)?.release() }

    /// The value kept, if any.
    @inline(__always)
    package var value: AnyObject? { slot.load(ordering: .acquiring)?.takeUnretainedValue() }

    /// Keeps `value` unless one is kept already.
    package func keep(_ value: some AnyObject & Sendable) {
        let kept = Unmanaged<AnyObject>.passRetained(value)
        if !slot.compareExchange(expected: nil, desired: kept, ordering: .acquiringAndReleasing).exchanged { kept.release() }
    }
}
