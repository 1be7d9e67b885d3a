#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The clock a key cache reads to decide when its keys are fresh, due for refresh, or too stale to use.
///
/// Times are Unix seconds, because they are also written to disk (warm start) and compared with HTTP dates.
/// Tests inject a manual clock so that an hour of cache life passes without an hour of waiting; network
/// timeouts are real time and are not measured with this clock.
public protocol KeyCacheClock: Sendable {
    /// The current time, in Unix seconds.
    func now() -> Double

    /// Suspends until ``now()`` reaches `deadline` (Unix seconds).
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    func sleep(until deadline: Double) async throws
}

/// The system's wall clock.
public struct SystemKeyCacheClock: KeyCacheClock {
    /// The system clock.
    public init() {}

    public func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    public func sleep(until deadline: Double) async throws {
        // Sleep in bounded steps so that a wall-clock jump (NTP step, suspended laptop) is noticed within a
        // minute instead of oversleeping a whole refresh interval.
        while true {
            let remaining = deadline - now()
            if remaining <= 0 { return }
            try await Task.sleep(for: .milliseconds(Int64(min(remaining, 60) * 1000) + 1))
        }
    }
}
