import Foundation
import IDTokenKit

/// The audit's replay stage: asked, in input order, about each token that passed every other check.
///
/// It runs on one thread, in the order of the log, so that "the second and later appearances of a token are
/// replays" means the same thing with one thread or many.
public protocol ReplayDetector: AnyObject {
    /// Records `entry`, presented on `line` at `at`.
    /// - Returns: nil when the token is new; otherwise the line where it was first seen, or 0 when that is
    ///   not known (a shared store that another process filled).
    /// - Throws: ``TokenError`` when the store cannot answer (the token is then refused with that error).
    func record(_ entry: ReplayEntry, line: Int, at: Double) throws(TokenError) -> Int?
}

/// Remembers every accepted token of this audit in memory: a 16-byte digest prefix, the issuer and the first
/// line, about 50 bytes a token. Unlike an online replay cache it never forgets an entry when a token expires,
/// because a log's times need not be in order.
public final class MemoryReplayDetector: ReplayDetector {
    struct Key: Hashable {
        let high: UInt64
        let low: UInt64
        let issuer: Int32
    }

    private var firstLines: [Key: Int] = [:]
    private var issuers: [String: Int32] = [:]

    public init() {}

    /// How many distinct accepted tokens it holds.
    public var count: Int { firstLines.count }

    public func record(_ entry: ReplayEntry, line: Int, at: Double) throws(TokenError) -> Int? {
        let issuer: Int32
        if let known = issuers[entry.issuer] { issuer = known } else {
            issuer = Int32(issuers.count)
            issuers[entry.issuer] = issuer
        }
        var high: UInt64 = 0, low: UInt64 = 0
        for (k, byte) in entry.signatureDigest.prefix(16).enumerated() {
            if k < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        let key = Key(high: high, low: low, issuer: issuer)
        if let first = firstLines[key] { return first }
        firstLines[key] = line
        return nil
    }
}

/// Uses a ``ReplayCache`` (such as the Redis one) as the replay stage, so that several audits, or an audit and
/// live servers, share one record of accepted tokens. The record's time is the cache's `now`.
public final class ReplayCacheDetector: ReplayDetector {
    public let cache: any ReplayCache

    public init(_ cache: any ReplayCache) { self.cache = cache }

    public func record(_ entry: ReplayEntry, line: Int, at: Double) throws(TokenError) -> Int? {
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
