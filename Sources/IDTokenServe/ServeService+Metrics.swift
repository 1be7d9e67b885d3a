import IDTokenKit
import IDTokenKitRedis

extension ServeService {
    /// Key-source and cache figures for `/metrics`.
    func keyMetrics() -> String {
        var out = "# HELP idtoken_keys_usable Whether a profile has a usable key set.\n# TYPE idtoken_keys_usable gauge\n"
        var fetches = "# HELP idtoken_key_fetches_total Key set fetches started, successful or not.\n# TYPE idtoken_key_fetches_total counter\n"
        var failed = "# HELP idtoken_key_fetch_failures_total Key set fetches that failed.\n# TYPE idtoken_key_fetch_failures_total counter\n"
        var failures = "# HELP idtoken_key_fetch_consecutive_failures Failed key fetches since the last success.\n# TYPE idtoken_key_fetch_consecutive_failures gauge\n"
        var stale = "# HELP idtoken_keys_stale Whether a profile's key set is served past its expiry (stale-if-error).\n# TYPE idtoken_keys_stale gauge\n"
        var staleSeconds = "# HELP idtoken_keys_stale_seconds How long a profile's key set has been served past its expiry (0 while fresh).\n# TYPE idtoken_keys_stale_seconds gauge\n"
        var cache = "# HELP idtoken_verified_token_cache_entries Tokens in a profile's verified-token cache.\n# TYPE idtoken_verified_token_cache_entries gauge\n"
        for member in verifier.members {
            let label = "{profile=\"\(IdentityHeaders.encode(member.name))\"}"
            out += "idtoken_keys_usable\(label) \(member.verifier.keySource.currentKeys() != nil ? 1 : 0)\n"
            if let remote = member.verifier.keySource as? HTTPKeySource {
                let status = remote.status()
                fetches += "idtoken_key_fetches_total\(label) \(status.fetchCount)\n"
                failed += "idtoken_key_fetch_failures_total\(label) \(status.failureCount)\n"
                failures += "idtoken_key_fetch_consecutive_failures\(label) \(status.consecutiveFailures)\n"
                stale += "idtoken_keys_stale\(label) \(status.isStale ? 1 : 0)\n"
                staleSeconds += "idtoken_keys_stale_seconds\(label) \(status.secondsStale.rounded(.down))\n"
            }
            let count = member.verifier.verifiedTokenCache?.count ?? 0
            cache += "idtoken_verified_token_cache_entries\(label) \(count)\n"
        }
        out += fetches + failed + failures + stale + staleSeconds + cache
        if let memoryReplay {
            out += "# HELP idtoken_replay_cache_entries Tokens in the in-memory replay cache.\n# TYPE idtoken_replay_cache_entries gauge\n"
            out += "idtoken_replay_cache_entries \(memoryReplay.count)\n"
        }
        if memoryReplay != nil || redisReplay != nil {
            let failures = memoryReplay?.fullCount ?? redisReplay?.failureCount ?? 0
            out += "# HELP idtoken_replay_store_failures_total Replay checks the store could not answer (Redis unreachable or slow, the in-memory cache full).\n# TYPE idtoken_replay_store_failures_total counter\n"
            out += "idtoken_replay_store_failures_total \(failures)\n"
            out += "# HELP idtoken_replay_unchecked_total Tokens accepted without a replay check (replayFailureMode allow).\n# TYPE idtoken_replay_unchecked_total counter\n"
            out += "idtoken_replay_unchecked_total \(redisReplay?.uncheckedCount ?? 0)\n"
        }
        return out
    }
}
