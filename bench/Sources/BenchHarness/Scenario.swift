import Foundation

/// A measured operation and the raw primitive it is compared with.
public struct Scenario {
    public let name: String
    public let summary: String
    /// The name of the baseline scenario measured in the same run, or nil for a baseline itself.
    public let baseline: String?
    let body: Body

    enum Body {
        case threads(OperationFactory)
        case tasks(AsyncOperationFactory)
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

    /// Runs the scenario on `threads` threads (or tasks) for about `seconds`.
    public func measure(threads: Int, seconds: Double) -> Sample {
        switch body {
        case .threads(let make): return measureThreads(threads, seconds: seconds, make)
        case .tasks(let make): return measureAsync(tasks: threads, seconds: seconds, make)
        }
    }

    /// Runs the operation `iterations` times on the calling thread; returns the number of failures.
    public func runFixed(iterations: Int) -> Int {
        var failures = 0
        let makeAsyncOperation: AsyncOperationFactory
        switch body {
        case .threads(let make):
            let operation = make()
            for _ in 0..<iterations where !operation() { failures += 1 }
            return failures
        case .tasks(let make):
            makeAsyncOperation = make
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

