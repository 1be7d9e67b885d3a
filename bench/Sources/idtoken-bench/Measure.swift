#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One timed run of an operation on some threads.
struct Sample {
    var operations: Int
    var wallSeconds: Double
    var cpuSeconds: Double
    var failures: Int

    var rate: Double { Double(operations) / wallSeconds }
    var ratePerCPUSecond: Double { Double(operations) / cpuSeconds }
}

/// CPU time used by the calling thread, in seconds.
func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Makes one operation per thread; each returns whether it succeeded (a benchmark of a failing path is a bug).
typealias OperationFactory = @Sendable () -> () -> Bool

/// Runs `makeOperation` on `threads` threads for about `seconds`, all starting together.
func measure(threads: Int, seconds: Double, _ makeOperation: @escaping OperationFactory) -> Sample {
    final class Slot: @unchecked Sendable {
        var operations = 0
        var cpu = 0.0
        var failures = 0
    }
    let slots = (0..<threads).map { _ in Slot() }
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let ready = DispatchGroup()
    for slot in slots {
        ready.enter()
        done.enter()
        let thread = Thread {
            let operation = makeOperation()
            ready.leave()
            start.wait()
            let cpu0 = threadCPUSeconds()
            let deadline = monotonicSeconds() + seconds
            var operations = 0
            var failures = 0
            repeat {
                // Check the clock once per batch so that timing costs nothing measurable.
                for _ in 0..<64 where !operation() { failures += 1 }
                operations += 64
            } while monotonicSeconds() < deadline
            slot.cpu = threadCPUSeconds() - cpu0
            slot.operations = operations
            slot.failures = failures
            done.leave()
        }
        thread.stackSize = 1 << 22
        thread.start()
    }
    ready.wait()
    let wall0 = monotonicSeconds()
    for _ in 0..<threads { start.signal() }
    done.wait()
    let wall = monotonicSeconds() - wall0
    return Sample(operations: slots.reduce(0) { $0 + $1.operations }, wallSeconds: wall,
                  cpuSeconds: slots.reduce(0) { $0 + $1.cpu }, failures: slots.reduce(0) { $0 + $1.failures })
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
