import Foundation
import TestSupport
import Testing
@testable import IDTokenKitRedis

/// How fast checks go through a local Redis, printed (not asserted: it measures the machine and the network
/// as much as the code). `swift test -c release --filter RedisReplayCacheRate`.
@Suite struct RedisReplayCacheRateTests {
    @Test(arguments: [1, 8])
    func checksPerSecond(threads: Int) throws {
        let server = try RedisServerProcess()
        var configuration = try RedisReplayCacheConfiguration(url: server.url)
        configuration.poolSize = threads
        let cache = RedisReplayCache(configuration: configuration)
        let now = unixNow()
        let perThread = 4000 / threads
        let start = Date()
        let accepted = raceOnThreads(threads) { thread -> Int in
            var accepted = 0
            for index in 0..<perThread where (try? cache.insertIfAbsentNow(entry(thread * perThread + index, expiresAt: now + 600), now: now)) == true {
                accepted += 1
            }
            return accepted
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(accepted.reduce(0, +) == perThread * threads)
        print("RedisReplayCache on loopback, \(threads) thread(s), pool of \(threads): \(Int(Double(perThread * threads) / elapsed)) checks/s")
    }
}
