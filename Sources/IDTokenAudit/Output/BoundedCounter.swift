/// Counts occurrences of strings, keeping at most `limit` distinct ones: values beyond are counted together
/// as ``otherCount``. Issuers, audiences and key IDs come from tokens, and a log of forged tokens could hold a
/// different one on every line; the cap keeps an audit's memory flat.
package struct BoundedCounter: Sendable, Equatable {
    package private(set) var counts: [String: Int] = [:]
    /// Occurrences of values that arrived after the limit was reached.
    package internal(set) var otherCount = 0
    package let limit: Int
    /// The values counted last and where they are in `counts`: a log repeats a handful of issuers, audiences and
    /// key IDs, mostly as the very same shared strings, which compare equal at once; such a value is counted
    /// without hashing it. Emptied whenever `counts` gains a value (its indices may then move).
    private var recent: [(value: String, index: Dictionary<String, Int>.Index)] = []
    private static let recentLimit = 8

    package init(limit: Int = 1000) { self.limit = limit }

    package mutating func add(_ value: String, _ n: Int = 1) {
        // Read in place (no copy of each entry, so no retain and release of its string); a length that differs
        // rules an entry out without comparing text.
        let count = value.utf8.count
        let known = recent.withUnsafeBufferPointer { entries -> Dictionary<String, Int>.Index? in
            for k in entries.indices where entries[k].value.utf8.count == count && entries[k].value == value {
                return entries[k].index
            }
            return nil
        }
        if let known {
            counts.values[known] += n
            return
        }
        if let index = counts.index(forKey: value) {
            counts.values[index] += n          // one lookup, counted in place
            if recent.count == BoundedCounter.recentLimit { recent.removeFirst() }
            recent.append((value, index))
        } else if counts.count < limit {
            counts[value] = n
            recent.removeAll(keepingCapacity: true)
        } else {
            otherCount += n
        }
    }

    package static func == (a: BoundedCounter, b: BoundedCounter) -> Bool {
        a.counts == b.counts && a.otherCount == b.otherCount && a.limit == b.limit
    }

    /// Values by decreasing count, then by name.
    package var sorted: [(value: String, count: Int)] {
        counts.map { (value: $0.key, count: $0.value) }.sorted { $0.count != $1.count ? $0.count > $1.count : $0.value < $1.value }
    }

    package var total: Int { counts.values.reduce(otherCount, +) }
}
