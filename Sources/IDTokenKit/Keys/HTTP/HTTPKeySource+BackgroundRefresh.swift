import AsyncHTTPClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The background refresh: one task that sleeps until the published set's refresh point (or the next retry after
/// a failure) and fetches then, so that a verification never waits for a refresh of a set it already has.
extension HTTPKeySource {
    enum Step {
        case sleep(any KeyCacheClock, until: Double)
        case refresh
        case stop
    }

    func startRefreshLoop() {
        state.withLockedValue { s in s.refreshTask = makeRefreshLoop() }
    }

    /// The loop holds the source weakly while it sleeps, so dropping the source ends the loop.
    func makeRefreshLoop() -> Task<Void, Never> {
        Task { [weak self] in
            while !Task.isCancelled {
                guard let step = self?.nextStep() else { return }
                switch step {
                case .stop:
                    return
                case .sleep(let clock, let deadline):
                    do { try await clock.sleep(until: deadline) } catch { return }
                case .refresh:
                    _ = try? await self?.backgroundFetch()
                }
            }
        }
    }

    func nextStep() -> Step {
        let now = clock.now()
        return state.withLockedValue { s in
            // A loop replaced by a newer one (see fetch) stops here without touching the newer one's state.
            if s.isShutDown || Task.isCancelled { return .stop }
            s.loopSleepsUntil = nil
            let due = max(s.snapshot?.refreshAt ?? -.infinity, retryAllowedAt(s))
            guard now < due else { return .refresh }
            s.loopSleepsUntil = due
            return .sleep(clock, until: due)
        }
    }

    func backgroundFetch() async throws -> Snapshot? {
        let task: Task<Snapshot, any Error>? = state.withLockedValue { s in
            s.isShutDown ? nil : startFetch(&s, now: clock.now(), reason: s.snapshot == nil ? "first load" : "refresh ahead of expiry")
        }
        return try await task?.value
    }
}
