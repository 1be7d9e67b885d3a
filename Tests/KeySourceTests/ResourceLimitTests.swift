import Foundation
import IDTokenKit
import TestSupport
import Testing

/// What a hostile or broken key endpoint, and a flood of tokens naming keys nobody has, cost the process:
/// memory stays bounded, fetches stay bounded, and verifications with a known key keep being answered.
/// One test at a time, and `scripts/test` runs this suite in a process of its own: the flood measures the
/// process's resident memory and a known token's latency, which other suites running alongside would distort.
@Suite(.serialized) struct ResourceLimitTests {
    /// The process's resident set size, in bytes (Linux: /proc/self/statm).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// A 100 MB key-set response is refused by the size limit (1 MiB by default) as soon as the limit is
    /// passed: the client stops reading, so the body is never held in memory. The server sends only as fast as
    /// the client reads, so what it managed to send is what the client read plus the kernel's socket buffers
    /// (a few MB on loopback). That count, unlike the process's resident memory or the time taken, does not
    /// depend on what the tests running alongside are doing.
    @Test(arguments: [true, false])
    func aHundredMegabyteResponseIsRefused(declareLength: Bool) async throws {
        try await HTTPKeySourceTests.withServer(.large(bytes: 100 << 20, declareLength: declareLength)) { server in
            let source = try HTTPKeySource(url: server.url, clock: ManualClock(), logger: CapturedLog().logger())
            let started = ContinuousClock.now
            let error = await #expect(throws: KeyFetchError.self) { try await source.refresh() }
            let elapsed = ContinuousClock.now - started
            #expect(error?.kind == .tooLarge)
            #expect(source.currentKeys() == nil)
            await source.shutdown()
            // Whether or not the client has closed the connection yet, the server cannot send more than the socket takes.
            let sent = server.largeBodyBytesSent
            #expect(sent < 24 << 20, "the server sent \(sent >> 20) MiB of the 100 MiB body before the client hung up")
            // Only a hang guard: the time depends on the machine's load.
            #expect(elapsed < .seconds(120), "refusing took \(elapsed)")
            print("100 MiB body, declared length \(declareLength): refused in \(elapsed) after the server sent \(sent >> 10) KiB")
        }
    }

    /// A flood of tokens, each naming a kid nobody published, against an HTTPS key source: the unknown-kid
    /// cooldown keeps the refetches to one per 30 s of (test) time, memory does not grow with the number of
    /// kids, and a token whose key is known is verified promptly all along.
    ///
    /// 100,000 kids by default, which takes a few seconds; `IDTK_UNKNOWN_KIDS=1000000` runs the million of the
    /// hardening issue (measured in README, "Development"). Two workers that yield now and then, so that the
    /// flood does not starve the tests running beside it.
    @Test func aFloodOfUnknownKidsCostsBoundedFetchesAndMemory() async throws {
        let count = ProcessInfo.processInfo.environment["IDTK_UNKNOWN_KIDS"].flatMap(Int.init) ?? 100_000
        try await HTTPKeySourceTests.withServer(.json(HTTPKeySourceTests.jwksA)) { server in
            let clock = ManualClock()
            // Debug messages name each unknown kid; a captured log at that level would itself grow with the flood.
            let log = CapturedLog()
            let source = try HTTPKeySource(url: server.url, cachePolicy: HTTPKeySourceTests.policy(),
                                           limits: HTTPKeySourceTests.limits, clock: clock, logger: log.logger(level: .info))
            let profile = Profile.oidc(issuers: ["https://issuer.test.invalid"], audiences: ["test-audience"])
            let verifier = try IDTokenVerifier(profile: profile, keys: source)
            let known = try #require(Fixtures.testTokens["test-rsa-1"])
            let at = Date(timeIntervalSince1970: 1_700_000_100)
            _ = try await verifier.verify(known, now: at)
            #expect(server.requestCount == 1)

            // The same payload and signature under a header naming kid "unknown-N".
            let parts = known.split(separator: ".")
            func token(_ n: Int) -> String {
                Base64URL.encode(Array("{\"alg\":\"RS256\",\"kid\":\"unknown-\(n)\"}".utf8)) + "." + parts[1] + "." + parts[2]
            }

            let before = Self.residentBytes()
            let started = ContinuousClock.now
            let workers = 2
            let perWorker = count / workers
            // Meanwhile: the known token, every few milliseconds; its slowest answer is the responsiveness.
            let probe = Task {
                var slowest = Duration.zero
                var answered = 0
                while !Task.isCancelled {
                    let t0 = ContinuousClock.now
                    _ = try await verifier.verify(known, now: at)
                    slowest = max(slowest, ContinuousClock.now - t0)
                    answered += 1
                    try? await Task.sleep(for: .milliseconds(2))
                }
                return (slowest, answered)
            }
            let unexpected = try await withThrowingTaskGroup(of: Int.self) { group in
                for w in 0..<workers {
                    group.addTask {
                        var unexpected = 0
                        for i in 0..<perWorker {
                            let n = w * perWorker + i
                            // Test time passes: 100 s over the whole run.
                            if n % (count / 100) == 0 { clock.advance(by: 1) }
                            if i % 64 == 0 { await Task.yield() }
                            do throws(TokenError) {
                                _ = try await verifier.verify(token(n), now: at)
                                unexpected += 1
                            } catch where error.code == .unknownKey {
                            } catch {
                                unexpected += 1
                            }
                        }
                        return unexpected
                    }
                }
                return try await group.reduce(0, +)
            }
            probe.cancel()
            let (slowest, answered) = try await probe.value
            let elapsed = ContinuousClock.now - started
            let grown = Self.residentBytes() - before

            #expect(unexpected == 0)
            // 100 s of test time with a 30 s cooldown: at most four refetches after the first load.
            #expect(server.requestCount <= 5, "\(server.requestCount) requests for \(count) unknown kids")
            #expect(grown < 64 << 20, "resident memory grew by \(grown >> 20) MiB over \(count) unknown kids")
            #expect(answered > 0)
            #expect(slowest < .seconds(1), "the known token waited \(slowest) during the flood")
            #expect(log.entries.count < 20, "\(log.entries.count) log entries at info and above")
            print("\(count) unknown kids: \(elapsed), \(server.requestCount) requests, RSS +\(grown >> 20) MiB, known-kid probe slowest \(slowest) over \(answered) answers")
            await source.shutdown()
        }
    }
}
