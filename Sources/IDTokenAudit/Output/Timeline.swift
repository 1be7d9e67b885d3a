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
    /// The counts: one row per bucket (counts per series), in a ring of ``maxBuckets`` rows where bucket `b` has
    /// row `b` modulo ``maxBuckets``. The buckets from `low` to `high` span fewer than that, so no two of them share
    /// a row; an empty row is a bucket nothing was counted in. Counting is an index, not a hash (the ring is made
    /// on the first count).
    var ring: [[Int]] = []
    // Internal, not private: merging shards' timelines (SummaryMerge.swift) sets them.
    var low = Int64.max
    var high = Int64.min
    let maxSeries: Int

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

    /// Bucket index (time / width, rounded down) → counts per series, for every bucket something was counted in.
    package internal(set) var buckets: [Int64: [Int]] {
        get {
            var buckets: [Int64: [Int]] = [:]
            guard low <= high, !ring.isEmpty else { return buckets }
            for bucket in low...high where !ring[Timeline.slot(bucket)].isEmpty { buckets[bucket] = ring[Timeline.slot(bucket)] }
            return buckets
        }
        set {
            ring = newValue.isEmpty ? [] : Array(repeating: [], count: Timeline.maxBuckets)
            for (bucket, counts) in newValue { ring[Timeline.slot(bucket)] = counts }
        }
    }

    /// The row of `bucket` in the ring.
    @inline(__always)
    static func slot(_ bucket: Int64) -> Int {
        let r = Int(bucket % Int64(maxBuckets))
        return r < 0 ? r + maxBuckets : r
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
        if ring.isEmpty { ring = Array(repeating: [], count: Timeline.maxBuckets) }
        count(index, in: Timeline.slot(bucket))
    }

    /// Counts one in series `index` of ring row `slot`, in place.
    @inline(__always)
    mutating func count(_ index: Int, in slot: Int, _ n: Int = 1) {
        ring.withUnsafeMutableBufferPointer { ring in
            if ring[slot].count <= index { ring[slot] += repeatElement(0, count: max(index + 1, series.count) - ring[slot].count) }
            ring[slot][index] += n
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
        guard low <= high, !ring.isEmpty else { return }
        var merged = Array(repeating: [Int](), count: Timeline.maxBuckets)
        for bucket in low...high where !ring[Timeline.slot(bucket)].isEmpty {
            let counts = ring[Timeline.slot(bucket)]
            let target = Timeline.slot(merge(bucket))
            if merged[target].count < counts.count { merged[target] += repeatElement(0, count: counts.count - merged[target].count) }
            for (n, count) in counts.enumerated() { merged[target][n] += count }
        }
        ring = merged
        low = merge(low)
        high = merge(high)
    }

    /// Every bucket from the first to the last, empty ones included: (start time, counts per series).
    package var rows: [(start: Double, counts: [Int])] {
        guard low <= high else { return [] }
        return (low...high).map { bucket in
            var counts = ring.isEmpty ? [] : ring[Timeline.slot(bucket)]
            if counts.count < series.count { counts += Array(repeating: 0, count: series.count - counts.count) }
            return (Double(bucket) * width, counts)
        }
    }
}
