import IDTokenKit

/// The shared record of an audit run spread over shards (DESIGN §12): for each accepted token, the earliest
/// presentation by (`at`, line) any shard has seen, whatever order the shards run in.
extension RedisReplayCache {
    /// Keeps the smaller of the stored (at, line) and the given one, atomically, and answers the earliest.
    /// KEYS[1] the token's key in the run, KEYS[2] the run's list of overturned claims. ARGV: at, line, attempt,
    /// time-to-live in milliseconds. The value is "at line attempt". A claim replaced by an earlier one is
    /// pushed to the list as "line at attempt newLine", so that `merge` can settle the verdict its shard wrote.
    /// The same (at, line) is the same record of a shard run again: it takes the claim over (its attempt), and
    /// is not a replay of itself.
    static let keepEarliestScript = """
    local v = redis.call('GET', KEYS[1])
    local value = ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. ARGV[3]
    if not v then
      redis.call('SET', KEYS[1], value, 'PX', ARGV[4])
      return ARGV[1] .. ' ' .. ARGV[2]
    end
    local a, l, attempt = string.match(v, '^(%S+) (%S+) (%S+)$')
    local na, nl = tonumber(ARGV[1]), tonumber(ARGV[2])
    local ca, cl = tonumber(a), tonumber(l)
    if na < ca or (na == ca and nl < cl) then
      redis.call('SET', KEYS[1], value, 'KEEPTTL')
      redis.call('RPUSH', KEYS[2], l .. ' ' .. a .. ' ' .. attempt .. ' ' .. ARGV[2])
      redis.call('PEXPIRE', KEYS[2], ARGV[4])
      return ARGV[1] .. ' ' .. ARGV[2]
    end
    if na == ca and nl == cl then
      redis.call('SET', KEYS[1], value, 'KEEPTTL')
    end
    return a .. ' ' .. l
    """

    static let overturnedScript = "return table.concat(redis.call('LRANGE', KEYS[1], 0, -1), '\\n')"

    /// The key prefix of run `run`'s records.
    static func runPrefix(_ configuration: RedisReplayCacheConfiguration, run: String) -> String {
        configuration.keyPrefix + "audit:" + run + ":"
    }

    /// Records that `entry` was accepted on `line` at `at` in audit run `run` (by the shard attempt `attempt`) and
    /// returns the line of the earliest presentation by (at, line) the run has seen: `line` itself when this one
    /// is the earliest so far. One round trip (a Lua script, atomic on the server). Entries live `ttlSeconds` from
    /// when Redis receives them: a run's shards may run hours apart, and a log's times are long past.
    /// - Throws: ``TokenError`` `replay_store_unavailable` when Redis cannot answer.
    package func keepEarliest(_ entry: ReplayEntry, run: String, at: Double, line: Int, attempt: String,
                              ttlSeconds: Int64) throws(TokenError) -> Int {
        let prefix = Self.runPrefix(configuration, run: run)
        let command: [[UInt8]] = [
            Array("EVAL".utf8), Array(Self.keepEarliestScript.utf8), Array("2".utf8),
            Self.keyBytes(for: entry, prefix: prefix), Array((prefix + "overturned").utf8),
            Array(Self.number(at).utf8), Array(String(line).utf8), Array(attempt.utf8), Array(String(ttlSeconds * 1000).utf8),
        ]
        let reply: RedisReply
        do { reply = try pool.withConnection { connection throws(RedisFailure) in try connection.command(command) } } catch {
            throw TokenError(.replayStoreUnavailable, claim: nil, "the replay store could not answer: \(error.description)")
        }
        guard case .string(let bytes) = reply, let space = bytes.firstIndex(of: UInt8(ascii: " ")),
              let first = Int(String(decoding: bytes[(space + 1)...], as: UTF8.self)) else {
            throw TokenError(.replayStoreUnavailable, claim: nil, "the replay store could not answer: Redis answered the run script with \(reply)")
        }
        return first
    }

    /// The claims of run `run` that a later shard overturned: (line, at, attempt, line of the earlier claim).
    package func overturnedClaims(run: String) throws(TokenError) -> [(line: Int, at: Double, attempt: String, earlier: Int)] {
        let command: [[UInt8]] = [Array("EVAL".utf8), Array(Self.overturnedScript.utf8), Array("1".utf8),
                                  Array((Self.runPrefix(configuration, run: run) + "overturned").utf8)]
        let reply: RedisReply
        do { reply = try pool.withConnection { connection throws(RedisFailure) in try connection.command(command) } } catch {
            throw TokenError(.replayStoreUnavailable, claim: nil, "the replay store could not answer: \(error.description)")
        }
        guard case .string(let bytes) = reply else {
            throw TokenError(.replayStoreUnavailable, claim: nil, "the replay store could not answer: Redis answered LRANGE with \(reply)")
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { row in
            let parts = row.split(separator: " ")
            guard parts.count == 4, let line = Int(parts[0]), let at = Double(parts[1]), let earlier = Int(parts[3]) else { return nil }
            return (line, at, String(parts[2]), earlier)
        }
    }

    /// `at` as Lua reads it back exactly: whole seconds as an integer, others with enough digits to round-trip.
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
