#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One timed run of an operation on some threads.
public struct Sample {
    public var operations: Int
    public var wallSeconds: Double
    public var cpuSeconds: Double
    public var failures: Int
    /// Peak resident memory during the run, when the scenario measures it.
    public var peakResidentBytes: Int?

    public init(operations: Int, wallSeconds: Double, cpuSeconds: Double, failures: Int) {
        self.operations = operations
        self.wallSeconds = wallSeconds
        self.cpuSeconds = cpuSeconds
        self.failures = failures
    }

    /// A run that could not be done at all.
    public init(failed failures: Int) {
        self.init(operations: 0, wallSeconds: 0, cpuSeconds: 0, failures: failures)
    }

    public var rate: Double { Double(operations) / wallSeconds }
    public var ratePerCPUSecond: Double { Double(operations) / cpuSeconds }
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
public typealias OperationFactory = @Sendable () -> () -> Bool

/// Starts `threads` threads that each call `prepare` (making their operations), wait until all are prepared,
/// then call `run` with what `prepare` made and their index; returns the wall time from the common start to the
/// last thread's end.
func runTogether<Prepared>(_ threads: Int, prepare: @escaping @Sendable () -> Prepared,
                           run: @escaping @Sendable (Prepared, Int) -> Void) -> Double {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let ready = DispatchGroup()
    for index in 0..<threads {
        ready.enter()
        done.enter()
        let thread = Thread {
            let prepared = prepare()
            ready.leave()
            start.wait()
            run(prepared, index)
            done.leave()
        }
        thread.stackSize = 1 << 22
        thread.start()
    }
    ready.wait()
    let wall0 = monotonicSeconds()
    for _ in 0..<threads { start.signal() }
    done.wait()
    return monotonicSeconds() - wall0
}

/// Runs `operation` in batches until `seconds` have passed on the monotonic clock; returns the operations run,
/// the failures, and the thread's CPU and wall time for them.
func runFor(_ seconds: Double, batch: Int, _ operation: () -> Bool) -> (operations: Int, failures: Int, cpu: Double, wall: Double) {
    let cpu0 = threadCPUSeconds()
    let wall0 = monotonicSeconds()
    let deadline = wall0 + seconds
    var operations = 0
    var failures = 0
    repeat {
        // Check the clock once per batch so that timing costs nothing measurable.
        for _ in 0..<batch where !operation() { failures += 1 }
        operations += batch
    } while monotonicSeconds() < deadline
    return (operations, failures, threadCPUSeconds() - cpu0, monotonicSeconds() - wall0)
}

/// Per-thread tallies, each written by its own thread only and read after all have finished.
final class Tally: @unchecked Sendable {
    var operations = 0
    var failures = 0
    var cpu = 0.0
    var wall = 0.0

    func add(_ run: (operations: Int, failures: Int, cpu: Double, wall: Double)) {
        operations += run.operations
        failures += run.failures
        cpu += run.cpu
        wall += run.wall
    }
}

/// Runs `makeOperation` on `threads` threads for about `seconds`, all starting together.
public func measureThreads(_ threads: Int, seconds: Double, _ makeOperation: @escaping OperationFactory) -> Sample {
    let tallies = (0..<threads).map { _ in Tally() }
    let wall = runTogether(threads, prepare: makeOperation) { operation, index in
        tallies[index].add(runFor(seconds, batch: 64, operation))
    }
    return Sample(operations: tallies.reduce(0) { $0 + $1.operations }, wallSeconds: wall,
                  cpuSeconds: tallies.reduce(0) { $0 + $1.cpu }, failures: tallies.reduce(0) { $0 + $1.failures })
}

/// Runs an operation and its baseline on `threads` threads, each thread switching between the two every
/// `slice` seconds until each has run for about `seconds`, and returns both samples (CPU and wall time of each
/// side summed over its slices).
///
/// On a shared machine a neighbour's load comes and goes within a second: measuring the two sides in
/// alternating slices of a few milliseconds exposes both to the same load, where two back-to-back
/// measurements of a second each can catch it on one side only.
public func measurePairedThreads(_ threads: Int, seconds: Double, slice: Double = 0.02,
                                 _ makeOperation: @escaping OperationFactory,
                                 baseline makeBaseline: @escaping OperationFactory) -> (Sample, Sample) {
    let tallies = (0..<threads).map { _ in [Tally(), Tally()] }
    _ = runTogether(threads, prepare: { [makeOperation(), makeBaseline()] }) { operations, index in
        // Until both sides have had their time; the baseline starts second, so it ends last.
        var side = 0
        while tallies[index][1].wall < seconds {
            tallies[index][side].add(runFor(slice, batch: 8, operations[side]))
            side = 1 - side
        }
    }
    func sample(_ side: Int) -> Sample {
        // Wall time: the threads ran side by side, so one thread's share of it stands for all (their average).
        Sample(operations: tallies.reduce(0) { $0 + $1[side].operations },
               wallSeconds: tallies.reduce(0) { $0 + $1[side].wall } / Double(threads),
               cpuSeconds: tallies.reduce(0) { $0 + $1[side].cpu }, failures: tallies.reduce(0) { $0 + $1[side].failures })
    }
    return (sample(0), sample(1))
}

public func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// CPU time used by the whole process, in seconds.
func processCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Makes one asynchronous operation per task, for verifiers whose API is `async` (jwt-kit's key collection
/// is an actor, so every verification is an actor hop).
public typealias AsyncOperationFactory = @Sendable () -> @Sendable () async -> Bool

/// Runs `makeOperation` in `tasks` concurrent tasks for about `seconds`. CPU time is the process's, since
/// tasks move between threads.
public func measureAsync(tasks: Int, seconds: Double, _ makeOperation: @escaping AsyncOperationFactory) -> Sample {
    final class Box: @unchecked Sendable { var sample = Sample(operations: 0, wallSeconds: 0, cpuSeconds: 0, failures: 0) }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let operations = (0..<tasks).map { _ in makeOperation() }
        let cpu0 = processCPUSeconds()
        let wall0 = monotonicSeconds()
        let deadline = wall0 + seconds
        let counts = await withTaskGroup(of: (Int, Int).self) { group in
            for operation in operations {
                group.addTask {
                    var count = 0, failures = 0
                    repeat {
                        for _ in 0..<16 where !(await operation()) { failures += 1 }
                        count += 16
                    } while monotonicSeconds() < deadline
                    return (count, failures)
                }
            }
            var total = (0, 0)
            for await (count, failures) in group { total.0 += count; total.1 += failures }
            return total
        }
        box.sample = Sample(operations: counts.0, wallSeconds: monotonicSeconds() - wall0,
                            cpuSeconds: processCPUSeconds() - cpu0, failures: counts.1)
        done.signal()
    }
    done.wait()
    return box.sample
}
