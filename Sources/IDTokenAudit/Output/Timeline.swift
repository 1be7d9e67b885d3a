/// Counts per time bucket, for the report's plots: verdicts over time and key usage over time.
///
/// Buckets are `width` seconds wide, aligned on multiples of the width (in UTC). The width starts at one minute
/// and steps up through round durations (5, 15, 30 minutes, 1, 2, 6, 12 hours, 1 day, 1 week, then doubling),
/// merging buckets, whenever the span from the first to the last bucket would exceed ``maxBuckets``; so memory
/// stays bounded whatever the log's time range, and the times may come in any order.
package struct Timeline: Sendable {
    package static let maxBuckets = 240
    /// Series names: index 0 is "valid", then one per error code, then key IDs as they are first seen.
    package internal(set) var series: [String]
    package internal(set) var width: Double = 60
    /// Bucket index (time / width, rounded down) → counts per series.
    package internal(set) var buckets: [Int64: [Int]] = [:]
    // Internal, not private: merging shards' timelines (SummaryMerge.swift) sets them.
    var low = Int64.max
    var high = Int64.min
    let maxSeries: Int
    /// The buckets counted last and where they are in `buckets`: a log's times cover a few buckets at a time, so
    /// most records are counted without hashing. Emptied whenever `buckets` gains or loses a key (its indices
    /// may then move).
    var recent: [(bucket: Int64, index: Dictionary<Int64, [Int]>.Index)] = []
    private static let recentLimit = 8

    package init(series: [String], maxSeries: Int = 64) {
        self.series = series
        self.maxSeries = maxSeries
    }

    /// The index of series `name`, adding it while there is room; nil when full.
    package mutating func seriesIndex(_ name: String) -> Int? {
        if let index = series.firstIndex(of: name) { return index }
        guard series.count < maxSeries else { return nil }
        series.append(name)
        return series.count - 1
    }

    package mutating func add(at time: Double, series index: Int) {
        guard time.isFinite, abs(time) < 1e13 else { return }
        var bucket = Int64((time / width).rounded(.down))
        while max(high, bucket) - min(low, bucket) >= Int64(Timeline.maxBuckets) {
            coarsen()
            bucket = Int64((time / width).rounded(.down))
        }
        low = min(low, bucket)
        high = max(high, bucket)
        // In place: a copy of the bucket's counts out of the dictionary and back would allocate on every call.
        let width = series.count
        func count(_ counts: inout [Int]) {
            if counts.count < width { counts += repeatElement(0, count: width - counts.count) }
            counts[index] += 1
        }
        for entry in recent where entry.bucket == bucket {
            count(&buckets.values[entry.index])
            return
        }
        if let found = buckets.index(forKey: bucket) {
            count(&buckets.values[found])
            if recent.count == Timeline.recentLimit { recent.removeFirst() }
            recent.append((bucket, found))
        } else {
            count(&buckets[bucket, default: []])
            recent.removeAll(keepingCapacity: true)
        }
    }

    /// Each width is a multiple of the one before, so that buckets merge exactly.
    static let widths: [Double] = [60, 300, 900, 1800, 3600, 7200, 21_600, 43_200, 86_400, 604_800]

    static func nextWidth(after width: Double) -> Double {
        widths.first(where: { $0 > width }) ?? width * 2
    }

    /// A copy with buckets merged until there are at most `maxRows` from the first to the last: for plots.
    package func coarsened(toAtMost maxRows: Int) -> Timeline {
        var copy = self
        while copy.low <= copy.high && copy.high - copy.low >= Int64(max(1, maxRows)) { copy.coarsen() }
        return copy
    }

    mutating func coarsen() {
        let factor = Timeline.nextWidth(after: width) / width
        width *= factor
        let k = Int64(factor)
        func merge(_ bucket: Int64) -> Int64 { bucket >= 0 ? bucket / k : -((-bucket + k - 1) / k) }
        var merged: [Int64: [Int]] = [:]
        for (bucket, counts) in buckets {
            let target = merge(bucket)
            var sum = merged[target] ?? []
            if sum.count < counts.count { sum += Array(repeating: 0, count: counts.count - sum.count) }
            for (k, n) in counts.enumerated() { sum[k] += n }
            merged[target] = sum
        }
        buckets = merged
        recent.removeAll(keepingCapacity: true)
        if low != Int64.max {
            low = merge(low)
            high = merge(high)
        }
    }

    /// Every bucket from the first to the last, empty ones included: (start time, counts per series).
    package var rows: [(start: Double, counts: [Int])] {
        guard low <= high else { return [] }
        return (low...high).map { bucket in
            var counts = buckets[bucket] ?? []
            if counts.count < series.count { counts += Array(repeating: 0, count: series.count - counts.count) }
            return (Double(bucket) * width, counts)
        }
    }
}
