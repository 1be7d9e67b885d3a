/// Counts occurrences of strings, keeping at most `limit` distinct ones: values beyond are counted together
/// as ``otherCount``. Issuers, audiences and key IDs come from tokens, and a log of forged tokens could hold a
/// different one on every line; the cap keeps an audit's memory flat.
public struct BoundedCounter: Sendable, Equatable {
    public private(set) var counts: [String: Int] = [:]
    /// Occurrences of values that arrived after the limit was reached.
    public private(set) var otherCount = 0
    public let limit: Int

    public init(limit: Int = 1000) { self.limit = limit }

    public mutating func add(_ value: String, _ n: Int = 1) {
        if let index = counts.index(forKey: value) {
            counts.values[index] += n          // one lookup, counted in place
        } else if counts.count < limit {
            counts[value] = n
        } else {
            otherCount += n
        }
    }

    /// Values by decreasing count, then by name.
    public var sorted: [(value: String, count: Int)] {
        counts.map { (value: $0.key, count: $0.value) }.sorted { $0.count != $1.count ? $0.count > $1.count : $0.value < $1.value }
    }

    public var total: Int { counts.values.reduce(otherCount, +) }
}
