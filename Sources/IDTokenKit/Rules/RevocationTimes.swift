import Foundation

/// Per-user revocation times for Firebase tokens: a token whose `auth_time` is before the user's time is
/// refused as `revoked`, like the Firebase Admin SDK's `checkRevoked` against `tokensValidAfterTime`.
///
/// The lookup runs on every verification of a token that passed every other check, so it must answer from
/// memory; keep the times fresh in the background (for example from the Admin API or your own user store).
public protocol RevocationTimes: Sendable {
    /// The time before which sessions of `uid` are revoked, or nil when they are not.
    func revocationTime(forUser uid: String) -> Date?
}

/// A fixed table of revocation times, by Firebase user ID.
public struct RevocationList: RevocationTimes {
    /// Revocation times by user ID (`sub`).
    public let times: [String: Date]

    /// A list of revocation times by user ID.
    public init(_ times: [String: Date]) { self.times = times }

    public func revocationTime(forUser uid: String) -> Date? { times[uid] }
}

/// Revocation times from a closure.
public struct RevocationLookup: RevocationTimes {
    let lookup: @Sendable (String) -> Date?

    /// Revocation times answered by `lookup`, called with a user ID on each verification that reaches the rule:
    /// it must be fast and must not block (keep the table in memory and refresh it elsewhere).
    public init(_ lookup: @escaping @Sendable (String) -> Date?) { self.lookup = lookup }

    public func revocationTime(forUser uid: String) -> Date? { lookup(uid) }
}
