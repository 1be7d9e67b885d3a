import IDTokenKit
import Synchronization

/// The service's counters, written as Prometheus text by ``prometheusText(extra:)``. Every counter is an atomic
/// added to with relaxed ordering: a request costs a few uncontended atomic adds, never a lock.
/// `@unchecked`: the two pointers are set once and point at atomics, only ever accessed atomically.
package final class ServeMetrics: @unchecked Sendable {
    /// Outcome slots: 0 allowed, 1 missing token, then one per ``TokenError/Code``.
    static let codes = TokenError.Code.allCases
    static let outcomeCount = 2 + codes.count
    /// Latency bucket upper bounds, in microseconds.
    static let bucketBounds: [UInt64] = [50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 100_000, 1_000_000]

    private let outcomes: UnsafeMutablePointer<Atomic<UInt64>>
    private let buckets: UnsafeMutablePointer<Atomic<UInt64>>
    private let latencySumNanos = Atomic<UInt64>(0)
    private let latencyCount = Atomic<UInt64>(0)
    private let otherRequests = Atomic<UInt64>(0)
    private let connectionsRefused = Atomic<UInt64>(0)
    private let headerTooLarge = Atomic<UInt64>(0)
    private let requestTimeouts = Atomic<UInt64>(0)
    let openConnections = Atomic<Int>(0)

    package init() {
        outcomes = .allocate(capacity: Self.outcomeCount)
        for i in 0..<Self.outcomeCount { (outcomes + i).initialize(to: Atomic(0)) }
        buckets = .allocate(capacity: Self.bucketBounds.count + 1)
        for i in 0...Self.bucketBounds.count { (buckets + i).initialize(to: Atomic(0)) }
    }

    deinit {
        outcomes.deinitialize(count: Self.outcomeCount)
        outcomes.deallocate()
        buckets.deinitialize(count: Self.bucketBounds.count + 1)
        buckets.deallocate()
    }

    static func slot(_ code: TokenError.Code?) -> Int {
        guard let code else { return 0 }
        return 2 + (codes.firstIndex(of: code) ?? 0)
    }

    /// One `/verify` answer: `slot` from ``slot(_:)`` (1 for a missing token), taking `nanoseconds`.
    func record(slot: Int, nanoseconds: UInt64) {
        outcomes[slot].wrappingAdd(1, ordering: .relaxed)
        let micros = nanoseconds / 1000
        var bucket = Self.bucketBounds.count
        for (i, bound) in Self.bucketBounds.enumerated() where micros <= bound {
            bucket = i
            break
        }
        buckets[bucket].wrappingAdd(1, ordering: .relaxed)
        latencySumNanos.wrappingAdd(nanoseconds, ordering: .relaxed)
        latencyCount.wrappingAdd(1, ordering: .relaxed)
    }

    func countOtherRequest() { otherRequests.wrappingAdd(1, ordering: .relaxed) }
    func countRefusedConnection() { connectionsRefused.wrappingAdd(1, ordering: .relaxed) }
    func countHeaderTooLarge() { headerTooLarge.wrappingAdd(1, ordering: .relaxed) }
    func countRequestTimeout() { requestTimeouts.wrappingAdd(1, ordering: .relaxed) }

    /// Requests answered with `code` so far (nil: allowed).
    package func count(of code: TokenError.Code?) -> UInt64 { outcomes[Self.slot(code)].load(ordering: .relaxed) }
    package var missingTokenCount: UInt64 { outcomes[1].load(ordering: .relaxed) }

    /// The Prometheus text exposition (version 0.0.4) of the counters, then `extra` (key-source and cache gauges).
    package func prometheusText(extra: String) -> String {
        var out = "# HELP idtoken_requests_total Verification requests by outcome and error code.\n"
        out += "# TYPE idtoken_requests_total counter\n"
        out += "idtoken_requests_total{outcome=\"allowed\",code=\"\"} \(outcomes[0].load(ordering: .relaxed))\n"
        out += "idtoken_requests_total{outcome=\"missing_token\",code=\"\"} \(outcomes[1].load(ordering: .relaxed))\n"
        for (i, code) in Self.codes.enumerated() {
            let outcome: String
            switch HTTPRefusal(code) {
            case .forbidden: outcome = "forbidden"
            case .unavailable: outcome = "unavailable"
            default: outcome = "invalid"
            }
            out += "idtoken_requests_total{outcome=\"\(outcome)\",code=\"\(code.rawValue)\"} \(outcomes[2 + i].load(ordering: .relaxed))\n"
        }
        out += "# HELP idtoken_request_duration_seconds Time to answer a verification request.\n"
        out += "# TYPE idtoken_request_duration_seconds histogram\n"
        var cumulative: UInt64 = 0
        for (i, bound) in Self.bucketBounds.enumerated() {
            cumulative &+= buckets[i].load(ordering: .relaxed)
            out += "idtoken_request_duration_seconds_bucket{le=\"\(Double(bound) / 1_000_000)\"} \(cumulative)\n"
        }
        cumulative &+= buckets[Self.bucketBounds.count].load(ordering: .relaxed)
        out += "idtoken_request_duration_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
        out += "idtoken_request_duration_seconds_sum \(Double(latencySumNanos.load(ordering: .relaxed)) / 1e9)\n"
        out += "idtoken_request_duration_seconds_count \(latencyCount.load(ordering: .relaxed))\n"
        out += "# HELP idtoken_other_requests_total Requests to paths other than /verify.\n# TYPE idtoken_other_requests_total counter\n"
        out += "idtoken_other_requests_total \(otherRequests.load(ordering: .relaxed))\n"
        out += "# HELP idtoken_connections_refused_total Connections closed at accept because maxConnections were open.\n"
        out += "# TYPE idtoken_connections_refused_total counter\nidtoken_connections_refused_total \(connectionsRefused.load(ordering: .relaxed))\n"
        out += "# HELP idtoken_header_too_large_total Requests answered 431.\n# TYPE idtoken_header_too_large_total counter\n"
        out += "idtoken_header_too_large_total \(headerTooLarge.load(ordering: .relaxed))\n"
        out += "# HELP idtoken_request_timeouts_total Requests answered 408 (header not complete in time).\n"
        out += "# TYPE idtoken_request_timeouts_total counter\nidtoken_request_timeouts_total \(requestTimeouts.load(ordering: .relaxed))\n"
        out += "# HELP idtoken_open_connections Connections open now.\n# TYPE idtoken_open_connections gauge\n"
        out += "idtoken_open_connections \(openConnections.load(ordering: .relaxed))\n"
        return out + extra
    }
}
