import Foundation
import IDTokenAudit
import IDTokenKit
import IDTokenKitRedis

/// The replay stage of one shard of an audit run on Redis (DESIGN §12): every shard of the run records each
/// accepted token's earliest presentation by (`at`, line) in one shared record, scoped by the run id, so that a
/// token's first presentation is the same whichever shard runs first. A shard that finds a token's earliest
/// presentation on its own line (it is the first so far, or it is run again) judges it the original; a claim
/// another shard overturns later is settled by `idtoken audit merge`.
final class RunReplayDetector: ReplayDetector {
    let store: RedisReplayCache
    let run: String
    /// This run of the shard: random, so that `merge` tells its claims from those of an earlier run of it.
    let attempt = (0..<8).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
    /// When Redis cannot answer: go on without the check (counted) instead of stopping.
    let continueWithoutStore: Bool
    let ttlSeconds: Int64
    private(set) var unchecked = 0

    init(store: RedisReplayCache, run: String, continueWithoutStore: Bool, ttlSeconds: Int64) {
        self.store = store
        self.run = run
        self.continueWithoutStore = continueWithoutStore
        self.ttlSeconds = ttlSeconds
    }

    func record(_ entry: ReplayEntry, line: Int, at: Double) throws(TokenError) -> Int? {
        do {
            let first = try store.keepEarliest(entry, run: run, at: at, line: line, attempt: attempt, ttlSeconds: ttlSeconds)
            return first == line ? nil : first
        } catch {
            guard continueWithoutStore else { throw error }
            unchecked += 1
            return nil
        }
    }
}
