import Foundation
import Synchronization

/// Runs `body(threadIndex)` on `threads` OS threads that wait at a common gate and start together, so that
/// they race on the same entries; returns each thread's result in thread order.
func raceOnThreads<Result: Sendable>(_ threads: Int, _ body: @escaping @Sendable (Int) -> Result) -> [Result] {
    let results = Mutex<[Int: Result]>([:])
    let done = DispatchGroup()
    let gate = Gate()
    for index in 0..<threads {
        done.enter()
        let thread = Thread {
            gate.arrive(total: threads)
            let result = body(index)
            results.withLock { $0[index] = result }
            done.leave()
        }
        thread.start()
    }
    done.wait()
    return results.withLock { all in (0..<threads).map { all[$0]! } }
}

/// A start line: every thread spins until all have arrived.
final class Gate: Sendable {
    private let arrived = Atomic<Int>(0)

    func arrive(total: Int) {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while arrived.load(ordering: .acquiring) < total { sched_yield() }
    }
}

/// SplitMix64: a small deterministic generator, so every run tests the same sequences.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
