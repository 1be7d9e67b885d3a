import Foundation
import TestSupport
import Testing
@testable import IDTokenKit
#if canImport(Glibc)
import Glibc
#endif

/// CPU time of the calling thread, in seconds: the rate per CPU-second does not depend on what else the
/// machine runs.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// How fast the in-memory cache checks tokens, printed (not asserted: a debug build or a busy machine says
/// nothing about the code). For meaningful numbers: `swift test -c release --filter MemoryReplayCacheRate`.
/// Each check does what the verifier does: build the entry from a just-computed digest, then insert it.
/// The run itself is checked: every new token accepted once, every replay refused.
@Suite struct MemoryReplayCacheRateTests {
    static let tokensPerThread = 60_000

    @Test(arguments: [1, 2])
    func checksPerSecond(threads: Int) throws {
        let now: Int64 = 1_700_000_000
        let issuer = "https://securetoken.google.com/demo-project"
        let digests = (0..<threads).map { thread in
            (0..<Self.tokensPerThread).flatMap { SHA256.hash(utf8: "rate-\(thread)-\($0)") }
        }
        let cache = MemoryReplayCache(capacity: 65_536 * threads)
        let results = raceOnThreads(threads) { thread -> (newRate: Double, replayRate: Double, accepted: Int, refused: Int) in
            let digests = digests[thread]
            var accepted = 0, refused = 0
            func pass() -> Double {
                let start = threadCPUSeconds()
                digests.withUnsafeBufferPointer { bytes in
                    for index in 0..<Self.tokensPerThread {
                        let entry = ReplayEntry(issuer: issuer, tokenDigest: Array(bytes[(index * 32)..<(index * 32 + 32)]),
                                                expiresAt: now + 3600)
                        if (try? cache.insertIfAbsentNow(entry, now: now)) == true { accepted += 1 } else { refused += 1 }
                    }
                }
                return Double(Self.tokensPerThread) / (threadCPUSeconds() - start)
            }
            let newRate = pass()
            let replayRate = pass()
            return (newRate, replayRate, accepted, refused)
        }
        for (thread, result) in results.enumerated() {
            #expect(result.accepted == Self.tokensPerThread)
            #expect(result.refused == Self.tokensPerThread)
            print("MemoryReplayCache, \(threads) thread(s), thread \(thread): "
                  + "new tokens \(Int(result.newRate)) checks per CPU-second, replays \(Int(result.replayRate))")
        }
    }
}
