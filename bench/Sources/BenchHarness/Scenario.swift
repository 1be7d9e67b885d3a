import Foundation

/// Runs a whole workload once on `threads` threads, limited to its first `limit` units of work when given (for
/// instruction counts), and says how many operations it did in how much time.
public typealias WholeRun = @Sendable (_ threads: Int, _ limit: Int?) -> Sample

/// A measured operation and the raw primitive it is compared with.
public struct Scenario {
    public let name: String
    public let summary: String
    /// The name of the baseline scenario measured in the same run, or nil for a baseline itself.
    public let baseline: String?
    /// How many operations one call of the operation does (8 for a batch of eight signatures): rates count
    /// operations, so a batch scenario compares with its single-operation baseline per signature.
    public var operationsPerCall = 1
    let body: Body

    enum Body {
        case threads(OperationFactory)
        case tasks(AsyncOperationFactory)
        case whole(WholeRun)
    }

    public init(name: String, summary: String, baseline: String?, makeOperation: @escaping OperationFactory) {
        self.name = name
        self.summary = summary
        self.baseline = baseline
        self.body = .threads(makeOperation)
    }

    /// A scenario whose operation is `async`: it runs in concurrent tasks instead of threads.
    public init(name: String, summary: String, baseline: String?, makeAsyncOperation: @escaping AsyncOperationFactory) {
        self.name = name
        self.summary = summary
        self.baseline = baseline
        self.body = .tasks(makeAsyncOperation)
    }

    /// A scenario that is one whole workload (an audit of a file) rather than an operation repeated for a while.
    public init(name: String, summary: String, baseline: String?, run: @escaping WholeRun) {
        self.name = name
        self.summary = summary
        self.baseline = baseline
        self.body = .whole(run)
    }

    /// Whether one measurement is a whole workload, however long it takes.
    public var isWholeRun: Bool {
        if case .whole = body { return true }
        return false
    }

    /// Runs the scenario on `threads` threads (or tasks) for about `seconds` (a whole run: once, to its end).
    public func measure(threads: Int, seconds: Double) -> Sample {
        switch body {
        case .threads(let make): return scaled(measureThreads(threads, seconds: seconds, make))
        case .tasks(let make): return measureAsync(tasks: threads, seconds: seconds, make)
        case .whole(let run): return run(threads, nil)
        }
    }

    /// Runs the scenario and `baseline` in alternating slices of 20 ms on each of `threads`
    /// threads (see ``measurePairedThreads(_:seconds:slice:_:baseline:)``), when both are operations run on
    /// threads; nil otherwise (async and whole-run scenarios are measured next to their baseline instead).
    public func measurePaired(with baseline: Scenario, threads: Int, seconds: Double) -> (Sample, Sample)? {
        guard case .threads(let make) = body, case .threads(let makeBaseline) = baseline.body else { return nil }
        let (sample, baseSample) = measurePairedThreads(threads, seconds: seconds, make, baseline: makeBaseline)
        return (scaled(sample), baseline.scaled(baseSample))
    }

    func scaled(_ sample: Sample) -> Sample {
        var sample = sample
        sample.operations *= operationsPerCall
        sample.failures *= operationsPerCall
        return sample
    }

    /// Runs `iterations` operations on the calling thread (calls of a batch operation: one per
    /// `operationsPerCall`, rounded up); returns the number of failures.
    public func runFixed(iterations: Int) -> Int {
        var failures = 0
        let makeAsyncOperation: AsyncOperationFactory
        switch body {
        case .threads(let make):
            let operation = make()
            let calls = (iterations + operationsPerCall - 1) / operationsPerCall
            for _ in 0..<calls where !operation() { failures += 1 }
            return failures
        case .tasks(let make):
            makeAsyncOperation = make
        case .whole(let run):
            return run(1, iterations).failures
        }
        let sample = DispatchSemaphore(value: 0)
        final class Count: @unchecked Sendable { var failures = 0 }
        let count = Count()
        let operation = makeAsyncOperation()
        Task.detached {
            for _ in 0..<iterations where !(await operation()) { count.failures += 1 }
            sample.signal()
        }
        sample.wait()
        return count.failures
    }
}

