import IDTokenKit

/// Reservations (``ReplayReservation``) in Redis: a held entry's value is `h:<owner>` with a short `PX`, a committed
/// one is `1` until the entry's expiry, as ``RedisReplayCache/insertIfAbsent(_:now:)`` writes it. Each step is one
/// script, atomic on the server, so that exactly one of several deliveries reserves, and a commit or release by a
/// holder whose hold ended never touches the next holder's.
extension RedisReplayCache {
    /// GET, and SET with a hold when free: answers `reserved`, `held` or `committed`.
    static let reserveScript = """
    local v = redis.call('GET', KEYS[1])
    if not v then
      redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
      return 'reserved'
    end
    if string.sub(v, 1, 2) == 'h:' then return 'held' end
    return 'committed'
    """

    /// Commits when the entry is still this holder's, or free again (its hold ended and nobody took it): the
    /// handler ran, so the entry is kept for its lifetime. ARGV[2] is PXAT or PX, as the cache's expiry says.
    static let commitScript = """
    local v = redis.call('GET', KEYS[1])
    if v == ARGV[1] or not v then
      redis.call('SET', KEYS[1], '1', ARGV[2], ARGV[3])
      return 1
    end
    return 0
    """

    /// Deletes the entry only when this holder still holds it.
    static let releaseScript = """
    if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
    return 0
    """

    /// Holds `entry` for `hold` seconds (at most until its expiry) unless another delivery holds or committed it.
    /// When Redis cannot answer, the failure mode decides: `reject` throws `replay_store_unavailable`; `allow`
    /// answers `reserved` without a hold (the handler runs; a duplicate delivery may run it again).
    public func reserve(_ entry: ReplayEntry, hold: Int64, now: Int64) async throws(TokenError) -> ReplayReservation.Outcome {
        let reservation = ReplayReservation(entry: entry, owner: ReplayReservation.newOwner())
        let lifetime = min(entry.expiresAt, Self.latestExpiry) - now
        guard lifetime > 0 else { return .reserved(reservation) }
        let command = [Array("EVAL".utf8), Array(Self.reserveScript.utf8), Array("1".utf8),
                       Self.keyBytes(for: entry, prefix: configuration.keyPrefix), Self.holderValue(reservation),
                       Array(String(min(hold, lifetime) * 1000).utf8)]
        return try await blocking { () throws(TokenError) -> ReplayReservation.Outcome in
            let reply: RedisReply
            do throws(RedisFailure) {
                reply = try self.pool.withConnection { connection throws(RedisFailure) in try connection.command(command) }
            } catch {
                _ = try self.unavailable(error.description)
                return .reserved(reservation)
            }
            switch reply {
            case .string(let answer) where answer == Array("reserved".utf8):
                self.noteAnswered()
                return .reserved(reservation)
            case .string(let answer) where answer == Array("held".utf8):
                self.noteAnswered()
                return .held
            case .string(let answer) where answer == Array("committed".utf8):
                self.noteAnswered()
                return .committed
            default:
                _ = try self.unavailable("Redis answered the reservation script with \(reply)")
                return .reserved(reservation)
            }
        }
    }

    /// Keeps the reserved entry until its expiry, if `reservation` still holds it (or its hold ended unclaimed).
    public func commit(_ reservation: ReplayReservation, now: Int64) async throws(TokenError) {
        let entry = reservation.entry
        let expiresAt = min(entry.expiresAt, Self.latestExpiry)
        guard expiresAt > now else { return }
        let expiry: [[UInt8]] = switch configuration.expiry {
        case .absolute: [Array("PXAT".utf8), Array(String(expiresAt * 1000).utf8)]
        case .relativeToNow: [Array("PX".utf8), Array(String((expiresAt - max(now, 0)) * 1000).utf8)]
        }
        let command = [Array("EVAL".utf8), Array(Self.commitScript.utf8), Array("1".utf8),
                       Self.keyBytes(for: entry, prefix: configuration.keyPrefix), Self.holderValue(reservation)] + expiry
        try await run(command, "commit")
    }

    /// Deletes the reserved entry, if `reservation` still holds it.
    public func release(_ reservation: ReplayReservation) async throws(TokenError) {
        let command = [Array("EVAL".utf8), Array(Self.releaseScript.utf8), Array("1".utf8),
                       Self.keyBytes(for: reservation.entry, prefix: configuration.keyPrefix), Self.holderValue(reservation)]
        try await run(command, "release")
    }

    /// Runs a commit or release script; an integer reply is an answer (whether it changed anything or not).
    private func run(_ command: [[UInt8]], _ what: String) async throws(TokenError) {
        try await blocking { () throws(TokenError) in
            let reply: RedisReply
            do throws(RedisFailure) {
                reply = try self.pool.withConnection { connection throws(RedisFailure) in try connection.command(command) }
            } catch {
                throw Self.failed(what, error.description)
            }
            guard case .integer = reply else { throw Self.failed(what, "Redis answered with \(reply)") }
            self.noteAnswered()
        }
    }

    private static func failed(_ what: String, _ reason: String) -> TokenError {
        TokenError(.replayStoreUnavailable, "the replay store could not answer: the reservation's \(what) failed (\(reason))")
    }

    private static func holderValue(_ reservation: ReplayReservation) -> [UInt8] {
        Array("h:\(String(reservation.owner, radix: 16))".utf8)
    }
}
