import Foundation
import IDTokenKit

/// Single flight: while one worker judges a token, another worker that meets the same token (the same hash) waits
/// for that verdict instead of verifying the token a second time.
extension VerdictCache {
    /// What ``lookupOrClaim(_:token:nonce:at:waits:)`` found.
    enum Lookup {
        /// The verdict held for the token at that time.
        case hit(Verdict)
        /// No verdict: the caller judges the token. When `claimed`, other workers wait for its verdict, and the
        /// caller must pass it to ``insert(_:token:nonce:entry:releasing:fresh:)`` with `releasing: true`, and with
        /// `fresh` as given here: whether neither generation held the token (for a time outside its verdicts'
        /// intervals), so that the insert need not look for it again.
        case judge(claimed: Bool, fresh: Bool)
        /// Another worker is judging the token, and the caller asked not to wait (``lookupOrClaim(_:token:nonce:at:waits:)``).
        case busy
    }

    /// How long a worker waits for another worker's verdict on the same token before judging it itself: a
    /// verification takes microseconds, so this is only a guard against a worker that never answers.
    static let patience: TimeInterval = 2

    /// The verdict for `token` (with `nonce`) at `at`, if held; otherwise the right to judge it. While another
    /// worker judges a token with the same hash, waits for that verdict first, so that a token repeated in batches
    /// judged at the same moment is verified once. (A different token that shares the hash only waits.)
    ///
    /// With `waits: false` it answers ``Lookup/busy`` instead of waiting: a worker that holds claims of its own
    /// while it gathers a batch must not wait on another that may be waiting on it.
    func lookupOrClaim(_ hash: UInt64, token: some Collection<UInt8>, nonce: String?, at: Double, waits: Bool = true) -> Lookup {
        guard isEnabled else { return .judge(claimed: false, fresh: false) }
        let mark = hash | 1
        let shard = shard(hash)
        return VerdictCache.withBytes(token, nonce) { token, nonce -> Lookup in
            shard.lock.lock()
            defer { shard.lock.unlock() }
            // The clock is read only when there is a verdict to wait for, not for every record.
            var deadline: Date?
            while true {
                let held = shard.find(mark, token, nonce, at: at)
                if let verdict = held.verdict { return .hit(verdict) }
                if !shard.inFlight.contains(mark) {
                    shard.inFlight.append(mark)
                    return .judge(claimed: true, fresh: !held.held)
                }
                guard waits else { return .busy }
                let until = deadline ?? Date(timeIntervalSinceNow: VerdictCache.patience)
                deadline = until
                shard.waiting += 1
                let woken = shard.lock.wait(until: until)
                shard.waiting -= 1
                if !woken { return .judge(claimed: false, fresh: false) }
            }
        }
    }
}
