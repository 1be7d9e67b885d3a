// A second process for the Redis replay-cache tests: presents tokens through its own RedisReplayCache, racing
// the test process, and prints how many it was allowed to accept.
//
// Usage: replay-probe REDIS_URL TOKENS THREADS NOW START_AT_UNIX_MS
import Foundation
import IDTokenKitRedis
import Synchronization

let arguments = CommandLine.arguments
guard arguments.count == 6, let tokens = Int(arguments[2]), let threads = Int(arguments[3]),
      let now = Int64(arguments[4]), let startAt = Double(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: replay-probe REDIS_URL TOKENS THREADS NOW START_AT_UNIX_MS\n".utf8))
    exit(2)
}
let cache = try RedisReplayCache(url: arguments[1])
let entries = (0..<tokens).map {
    ReplayEntry(issuer: "https://probe.example", tokenDigest: SHA256.hash(Array("shared-token-\($0)".utf8)),
                expiresAt: now + 3600)
}
let accepted = Atomic<Int>(0)
let failures = Atomic<Int>(0)
// Both processes start at the same instant, so that they race on every token.
let wait = startAt / 1000 - Date().timeIntervalSince1970
if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
DispatchQueue.concurrentPerform(iterations: threads) { thread in
    for index in 0..<tokens {
        // Each thread walks the tokens from a different starting point.
        let entry = entries[(index + thread * tokens / threads) % tokens]
        do {
            if try cache.insertIfAbsentNow(entry, now: now) { accepted.add(1, ordering: .relaxed) }
        } catch {
            failures.add(1, ordering: .relaxed)
        }
    }
}
print("accepted \(accepted.load(ordering: .relaxed)) failures \(failures.load(ordering: .relaxed))")
