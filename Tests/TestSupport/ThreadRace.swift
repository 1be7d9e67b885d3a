import Foundation
import JOSE
import Synchronization

/// Runs `body(threadIndex)` on `threads` OS threads that wait at a common start line and begin together, so
/// that they race on the same entries; returns each thread's result in thread order.
public func raceOnThreads<Result: Sendable>(_ threads: Int, _ body: @escaping @Sendable (Int) -> Result) -> [Result] {
    let results = Mutex<[Int: Result]>([:])
    let done = DispatchGroup()
    let gate = StartGate()
    for index in 0..<threads {
        done.enter()
        Thread {
            gate.arrive(total: threads)
            let result = body(index)
            results.withCriticalSection { $0[index] = result }
            done.leave()
        }.start()
    }
    done.wait()
    return results.withCriticalSection { all in (0..<threads).map { all[$0]! } }
}

/// A start line: every thread spins until all have arrived.
final class StartGate: Sendable {
    private let arrived = Atomic<Int>(0)

    func arrive(total: Int) {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while arrived.load(ordering: .acquiring) < total { sched_yield() }
    }
}
