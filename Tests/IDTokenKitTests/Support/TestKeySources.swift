import Foundation
import IDTokenKit
import Synchronization

/// A key source that has nothing and cannot fetch anything.
struct UnavailableKeySource: KeySource {
    func currentKeys() -> JWKSet? { nil }
    func keys(refreshingFor unknownKid: String?) async throws(TokenError) -> JWKSet {
        throw TokenError(.keysUnavailable, "the test key source never has keys")
    }
}

/// A key source that starts with `initial` and, when asked to refresh, switches to `refreshed`; it counts
/// the refreshes it was asked for.
final class RotatingKeySource: KeySource {
    private let state: Mutex<(current: JWKSet?, refreshes: [String?])>
    private let refreshed: JWKSet

    init(initial: JWKSet?, refreshed: JWKSet) {
        state = Mutex((initial, []))
        self.refreshed = refreshed
    }

    var refreshes: [String?] { state.withCriticalSection { $0.refreshes } }

    func currentKeys() -> JWKSet? { state.withCriticalSection { $0.current } }

    func keys(refreshingFor unknownKid: String?) async throws(TokenError) -> JWKSet {
        let refreshed = self.refreshed
        return state.withCriticalSection { state in
            state.refreshes.append(unknownKid)
            state.current = refreshed
            return refreshed
        }
    }
}

/// An in-memory replay cache for tests: insert-if-absent under a lock.
final class TestReplayCache: SynchronousReplayCache {
    private let entries = Mutex<Set<ReplayEntry>>([])

    var recorded: Set<ReplayEntry> { entries.withCriticalSection { $0 } }

    func insertIfAbsentNow(_ entry: ReplayEntry, now: Int64) throws(TokenError) -> Bool {
        entries.withCriticalSection { $0.insert(entry).inserted }
    }
}

/// A replay cache that can only answer asynchronously.
actor AsyncOnlyReplayCache: ReplayCache {
    private var entries: Set<ReplayEntry> = []
    func insertIfAbsent(_ entry: ReplayEntry, now: Int64) async throws(TokenError) -> Bool {
        entries.insert(entry).inserted
    }
}
