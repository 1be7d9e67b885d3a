import Foundation
import IDTokenKit

/// The audit's replay stage: asked, in input order, about each token that passed every other check.
///
/// It runs on one thread, in the order of the log, so that "the second and later appearances of a token are
/// replays" means the same thing with one thread or many.
package protocol ReplayDetector: AnyObject {
    /// Records `entry`, presented on `line` at `at`.
    /// - Returns: nil when the token is new; otherwise the line where it was first seen, or 0 when that is
    ///   not known (a shared store that another process filled).
    /// - Throws: ``TokenError`` when the store cannot answer; the audit then stops, since no later verdict would
    ///   know about replays.
    func record(_ entry: ReplayEntry, line: Int, at: Double) throws(TokenError) -> Int?
}

/// Remembers every accepted token of this audit in memory: 128 bits of its replay key (the digest of the signed
/// `header.payload`, mixed with the issuer) and the line it was first accepted on, 20 bytes a token in an open-addressing table
/// kept at most 70 % full (about 30 bytes a token, 60 MB at the peak of growing past a million). Unlike an online
/// replay cache it never forgets an entry when a token expires, because a log's times need not be in order.
package final class MemoryReplayDetector: ReplayDetector {
    private var words: [UInt64]      // two per slot; (0, 0) is an empty slot
    private var lines: [UInt32]
    private var mask: Int
    private var issuers: [String: UInt64] = [:]
    /// How many distinct accepted tokens it holds.
    package private(set) var count = 0

    package init(initialCapacity: Int = 1 << 14) {
        var capacity = 16
        while capacity < initialCapacity { capacity <<= 1 }
        words = Array(repeating: 0, count: capacity * 2)
        lines = Array(repeating: 0, count: capacity)
        mask = capacity - 1
    }

    package func record(_ entry: ReplayEntry, line: Int, at: Double) throws(TokenError) -> Int? {
        let issuer: UInt64
        if let known = issuers[entry.issuer] { issuer = known } else {
            issuer = UInt64(issuers.count + 1) &* 0x9E37_79B9_7F4A_7C15
            issuers[entry.issuer] = issuer
        }
        var high: UInt64 = 0, low: UInt64 = 0
        for (k, byte) in entry.tokenDigest.prefix(16).enumerated() {
            if k < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        high ^= issuer
        if high == 0 && low == 0 { low = 1 }
        if let first = find(high, low) { return first }
        if (count + 1) * 10 > lines.count * 7 { grow() }
        insert(high, low, line: UInt32(clamping: line))
        count += 1
        return nil
    }

    private func find(_ high: UInt64, _ low: UInt64) -> Int? {
        var slot = Int(truncatingIfNeeded: low) & mask
        while true {
            let h = words[2 * slot], l = words[2 * slot + 1]
            if h == 0 && l == 0 { return nil }
            if h == high && l == low { return Int(lines[slot]) }
            slot = (slot + 1) & mask
        }
    }

    private func insert(_ high: UInt64, _ low: UInt64, line: UInt32) {
        var slot = Int(truncatingIfNeeded: low) & mask
        while words[2 * slot] != 0 || words[2 * slot + 1] != 0 { slot = (slot + 1) & mask }
        words[2 * slot] = high
        words[2 * slot + 1] = low
        lines[slot] = line
    }

    private func grow() {
        let oldWords = words, oldLines = lines
        let capacity = oldLines.count * 2
        words = Array(repeating: 0, count: capacity * 2)
        lines = Array(repeating: 0, count: capacity)
        mask = capacity - 1
        for slot in oldLines.indices where oldWords[2 * slot] != 0 || oldWords[2 * slot + 1] != 0 {
            insert(oldWords[2 * slot], oldWords[2 * slot + 1], line: oldLines[slot])
        }
    }
}

/// Uses a ``ReplayCache`` (such as the Redis one) as the replay stage, so that several audits, or an audit and
/// live servers, share one record of accepted tokens. The record's time is the cache's `now`.
package final class ReplayCacheDetector: ReplayDetector {
    package let cache: any ReplayCache

    package init(_ cache: any ReplayCache) { self.cache = cache }

    package func record(_ entry: ReplayEntry, line: Int, at: Double) throws(TokenError) -> Int? {
        let now = Int64(at.rounded(.down))
        let inserted: Bool
        if let synchronous = cache as? any SynchronousReplayCache {
            inserted = try synchronous.insertIfAbsentNow(entry, now: now)
        } else {
            // The replay stage runs on the audit's own thread, not in the concurrency pool, so it may wait.
            inserted = try ReplayCacheDetector.wait(cache, entry, now)
        }
        return inserted ? nil : 0
    }

    private static func wait(_ cache: any ReplayCache, _ entry: ReplayEntry, _ now: Int64) throws(TokenError) -> Bool {
        final class Box: @unchecked Sendable { var result: Result<Bool, TokenError> = .success(false) }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(TokenError) { box.result = .success(try await cache.insertIfAbsent(entry, now: now)) } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try box.result.get()
    }
}
