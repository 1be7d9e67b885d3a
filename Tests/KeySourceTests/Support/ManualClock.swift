import IDTokenKit
import NIOConcurrencyHelpers

/// A key-cache clock that moves only when the test says, so that hours of cache life pass in microseconds.
/// Sleepers wake when ``advance(by:)`` passes their deadline.
final class ManualClock: KeyCacheClock {
    private struct Sleeper {
        let id: Int
        let deadline: Double
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Double
        var sleepers: [Sleeper] = []
        var nextID = 0
        var cancelledBeforeRegistering: Set<Int> = []
    }

    private let state: NIOLockedValueBox<State>

    init(start: Double = 1_700_000_000) { state = NIOLockedValueBox(State(now: start)) }

    func now() -> Double { state.withLockedValue { $0.now } }

    /// The deadlines of the tasks sleeping on this clock.
    var pendingDeadlines: [Double] { state.withLockedValue { $0.sleepers.map(\.deadline) } }

    func advance(by seconds: Double) {
        let woken = state.withLockedValue { s -> [Sleeper] in
            s.now += seconds
            let due = s.sleepers.filter { $0.deadline <= s.now }
            s.sleepers.removeAll { $0.deadline <= s.now }
            return due
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    func sleep(until deadline: Double) async throws {
        let id = state.withLockedValue { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: (any Error)?? = state.withLockedValue { s in
                    if s.cancelledBeforeRegistering.remove(id) != nil { return .some(CancellationError()) }
                    if deadline <= s.now { return .some(nil) }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                switch outcome {
                case .some(.some(let error)): continuation.resume(throwing: error)
                case .some(.none): continuation.resume()
                case .none: break
                }
            }
        } onCancel: {
            let sleeper = state.withLockedValue { s -> Sleeper? in
                guard let index = s.sleepers.firstIndex(where: { $0.id == id }) else {
                    s.cancelledBeforeRegistering.insert(id)
                    return nil
                }
                return s.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
