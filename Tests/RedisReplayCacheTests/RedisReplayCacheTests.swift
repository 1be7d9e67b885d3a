import Foundation
import Logging
import Synchronization
import TestSupport
import Testing
@testable import IDTokenKitRedis

/// The replay entry of a synthetic token.
func entry(_ token: Int, issuer: String = "https://appleid.apple.com", expiresAt: Int64) -> ReplayEntry {
    ReplayEntry(issuer: issuer, tokenDigest: SHA256.hash(Array("token-\(token)".utf8)), expiresAt: expiresAt)
}

/// Wall-clock Unix seconds: Redis's PXAT is on its own (the same machine's) clock.
func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }

@Suite struct RedisReplayCacheTests {
    @Test func acceptsOnceThenRefusesReplays() async throws {
        let server = try RedisServerProcess()
        let cache = try RedisReplayCache(url: server.url)
        let now = unixNow()
        #expect(try cache.insertIfAbsentNow(entry(1, expiresAt: now + 600), now: now))
        #expect(try !cache.insertIfAbsentNow(entry(1, expiresAt: now + 600), now: now))
        #expect(try await !cache.insertIfAbsent(entry(1, expiresAt: now + 600), now: now))
        #expect(try await cache.insertIfAbsent(entry(2, expiresAt: now + 600), now: now))
        // The same signature under another issuer is another key.
        #expect(try cache.insertIfAbsentNow(entry(1, issuer: "https://www.facebook.com", expiresAt: now + 600), now: now))
        let key = RedisReplayCache.key(for: entry(1, expiresAt: now + 600), prefix: "idtk:replay:")
        #expect(try server.command(["EXISTS", key]) == .integer(1))
        #expect(try server.command(["GET", key]) == .string(Array("1".utf8)))
        #expect(try server.command(["DBSIZE"]) == .integer(3))
    }

    /// 8 threads × 10,000 attempts on 1,000 tokens: exactly 1,000 acceptances, one per token.
    @Test func exactlyOnceUnderConcurrency() throws {
        let server = try RedisServerProcess()
        let cache = try RedisReplayCache(url: server.url)
        let now = unixNow()
        let tokens = (0..<1000).map { entry($0, expiresAt: now + 3600) }
        let errors = Atomic<Int>(0)
        let perThread = raceOnThreads(8) { thread -> [Int] in
            var accepted = [Int](repeating: 0, count: tokens.count)
            for attempt in 0..<10_000 {
                let token = (attempt &* 7919 &+ thread &* 131) % tokens.count
                do {
                    if try cache.insertIfAbsentNow(tokens[token], now: now) { accepted[token] += 1 }
                } catch {
                    errors.add(1, ordering: .relaxed)
                }
            }
            return accepted
        }
        let acceptedPerToken = (0..<tokens.count).map { token in perThread.reduce(0) { $0 + $1[token] } }
        #expect(errors.load(ordering: .relaxed) == 0)
        #expect(acceptedPerToken.reduce(0, +) == 1000)
        #expect(acceptedPerToken.allSatisfy { $0 == 1 })
        #expect(try server.command(["DBSIZE"]) == .integer(1000))
    }

    /// The async API from many tasks at once through a pool smaller than the number of tasks.
    @Test func exactlyOnceFromConcurrentTasks() async throws {
        let server = try RedisServerProcess()
        var configuration = try RedisReplayCacheConfiguration(url: server.url)
        configuration.poolSize = 3
        configuration.commandTimeout = .seconds(5)
        let cache = RedisReplayCache(configuration: configuration)
        let now = unixNow()
        let accepted = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<32 {
                group.addTask {
                    var accepted = 0
                    for index in 0..<200 where try await cache.insertIfAbsent(entry((index + task * 7) % 200, expiresAt: now + 600), now: now) {
                        accepted += 1
                    }
                    return accepted
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(accepted == 200)
    }

    /// Two processes present the same 1,000 tokens at the same moment through one Redis.
    @Test func exactlyOnceAcrossTwoProcesses() throws {
        let server = try RedisServerProcess()
        let now = unixNow()
        let startAt = (Date().timeIntervalSince1970 + 1.0) * 1000
        let probe = try ChildProcess(replayProbeExecutable().path, [server.url, "1000", "4", String(now), String(Int64(startAt))],
                                     standardOutput: .pipe)

        let cache = try RedisReplayCache(url: server.url)
        let entries = (0..<1000).map {
            ReplayEntry(issuer: "https://probe.example", tokenDigest: SHA256.hash(Array("shared-token-\($0)".utf8)),
                        expiresAt: now + 3600)
        }
        let wait = startAt / 1000 - Date().timeIntervalSince1970
        if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        let mine = raceOnThreads(4) { thread -> Int in
            var accepted = 0
            for index in 0..<1000 where (try? cache.insertIfAbsentNow(entries[(index + thread * 250 + 125) % 1000], now: now)) == true {
                accepted += 1
            }
            return accepted
        }.reduce(0, +)
        let text = String(decoding: probe.standardOutput!.readDataToEndOfFile(), as: UTF8.self)
        #expect(probe.wait() == 0)
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        let theirs = try #require(fields.count == 4 ? Int(fields[1]) : nil, "probe printed: \(text)")
        #expect(fields.count == 4 && fields[3] == "0", "the probe's checks failed: \(text)")
        #expect(mine + theirs == 1000)
        // Both processes did accept some: they really raced rather than one finishing first.
        #expect(mine > 0 && theirs > 0, "this process accepted \(mine), the probe \(theirs)")
    }

    @Test(arguments: [RedisReplayCacheConfiguration.FailureMode.reject, .allow])
    func redisStoppedMidRunThenRestarted(mode: RedisReplayCacheConfiguration.FailureMode) throws {
        let server = try RedisServerProcess()
        var configuration = try RedisReplayCacheConfiguration(url: server.url)
        configuration.failureMode = mode
        configuration.poolSize = 4
        configuration.reconnectDelay = .milliseconds(50)
        let logs = CapturedLog()
        let cache = RedisReplayCache(configuration: configuration, logger: logs.logger())
        let now = unixNow()

        // Four threads check new tokens continuously while the server is stopped under them.
        let stopped = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)
        let next = Atomic<Int>(0)
        let lateOutcomes = Mutex<[Result<Bool, TokenError>]>([])
        let workers = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: workers) {
                while !finished.load(ordering: .acquiring) {
                    let startedAfterStop = stopped.load(ordering: .acquiring)
                    let token = next.add(1, ordering: .relaxed).newValue
                    let outcome = Result { () throws(TokenError) -> Bool in
                        try cache.insertIfAbsentNow(entry(token, expiresAt: now + 600), now: now)
                    }
                    if startedAfterStop { lateOutcomes.withCriticalSection { $0.append(outcome) } }
                }
            }
        }
        while next.load(ordering: .relaxed) < 300 { usleep(1000) }
        server.stop()
        stopped.store(true, ordering: .releasing)
        while lateOutcomes.withCriticalSection({ $0.count }) < 300 { usleep(1000) }
        finished.store(true, ordering: .releasing)
        workers.wait()

        let outcomes = lateOutcomes.withCriticalSection { $0 }
        for outcome in outcomes {
            switch (mode, outcome) {
            case (.allow, .success(let accepted)):
                #expect(accepted)
            case (.reject, .failure(let error)):
                #expect(error.code == .replayStoreUnavailable)
                #expect(error.message.contains("redis://127.0.0.1:\(server.port)/0 is unavailable"))
            default:
                Issue.record("with failure mode \(mode), a check after the stop gave \(outcome)")
            }
        }
        #expect(logs.contains(level: mode == .reject ? .error : .warning, "replay store unavailable"))

        // Back on the same port: checks work again once the pool has reconnected. A token accepted and then
        // seen as a replay shows Redis answering (in allow mode an unanswered check also says true).
        try server.start()
        var recoveredWith: ReplayEntry?
        for attempt in 0..<100 {
            let fresh = entry(1_000_000 + attempt, expiresAt: now + 600)
            if (try? cache.insertIfAbsentNow(fresh, now: now)) == true, (try? cache.insertIfAbsentNow(fresh, now: now)) == false {
                recoveredWith = fresh
                break
            }
            usleep(20_000)
        }
        let fresh = try #require(recoveredWith, "checks did not recover after Redis restarted")
        #expect(try server.command(["EXISTS", RedisReplayCache.key(for: fresh, prefix: "idtk:replay:")]) == .integer(1))
        #expect(logs.contains(level: .notice, "replay store reachable again"))
    }

    /// Writing to a connection whose server has gone raises SIGPIPE, which would end the process; the command
    /// must fail instead. A large command keeps hiredis writing after the peer's reset. It runs on a thread
    /// with SIGPIPE unblocked, as an application's own threads have it (the test runner's threads block it).
    @Test func aWriteToAVanishedServerFailsWithoutSIGPIPE() throws {
        let server = try RedisServerProcess()
        let connection = try RedisConnection(host: "127.0.0.1", port: server.port, connectTimeoutMilliseconds: 500,
                                             commandTimeoutMilliseconds: 2000, username: nil, password: nil, database: 0)
        #expect(try connection.command([Array("PING".utf8)]) == .status("PONG"))
        server.stop()
        let large = [UInt8](repeating: UInt8(ascii: "x"), count: 16 << 20)
        let outcome = raceOnThreads(1) { _ -> String in
            var sigpipe = sigset_t()
            sigemptyset(&sigpipe)
            sigaddset(&sigpipe, SIGPIPE)
            pthread_sigmask(SIG_UNBLOCK, &sigpipe, nil)
            do {
                _ = try connection.command([Array("SET".utf8), Array("k".utf8), large])
                return "answered"
            } catch {
                return "failed: \(error)"
            }
        }
        #expect(outcome[0].hasPrefix("failed"), "\(outcome[0])")
        #expect(connection.isBroken)
    }

    @Test func anUnreachableServerFollowsTheFailureModeFromTheStart() throws {
        let port = try RedisServerProcess.freeLoopbackPort()
        let rejecting = try RedisReplayCache(url: "redis://127.0.0.1:\(port)")
        let now = unixNow()
        let error = #expect(throws: TokenError.self) { try rejecting.insertIfAbsentNow(entry(1, expiresAt: now + 60), now: now) }
        #expect(error?.code == .replayStoreUnavailable)
        #expect(error?.message.contains("unavailable") == true)
        let allowing = try RedisReplayCache(url: "redis://127.0.0.1:\(port)", failureMode: .allow)
        #expect(try allowing.insertIfAbsentNow(entry(1, expiresAt: now + 60), now: now))
        #expect(try allowing.insertIfAbsentNow(entry(1, expiresAt: now + 60), now: now))
    }

    /// An entry is gone from Redis once `exp + leeway` has passed.
    @Test func entriesExpireAtExpiryPlusLeeway() throws {
        let server = try RedisServerProcess()
        let cache = try RedisReplayCache(url: server.url)
        let now = unixNow()
        let token = entry(7, expiresAt: now + 2)
        let key = RedisReplayCache.key(for: token, prefix: "idtk:replay:")
        #expect(try cache.insertIfAbsentNow(token, now: now))
        guard case .integer(let ttl) = try server.command(["PTTL", key]) else { Issue.record("PTTL did not answer an integer"); return }
        #expect(ttl > 0 && ttl <= 2000)
        #expect(try server.command(["EXISTS", key]) == .integer(1))
        #expect(try !cache.insertIfAbsentNow(token, now: now))
        // Wait until just past (exp + leeway) on the wall clock.
        let deadline = Double(token.expiresAt) + 0.15
        let pause = deadline - Date().timeIntervalSince1970
        if pause > 0 { usleep(UInt32(pause * 1_000_000)) }
        #expect(try server.command(["EXISTS", key]) == .integer(0))
        // Redis forgot it; the verifier rejects such a token as expired before it gets here.
        #expect(try cache.insertIfAbsentNow(token, now: now))
    }

    /// With `relativeToNow`, a token judged at a past time (an audit) still gets its full time-to-live.
    @Test func relativeExpiryCountsFromTheCheck() throws {
        let server = try RedisServerProcess()
        let absolute = try RedisReplayCache(url: server.url)
        let relative = try RedisReplayCache(url: server.url, expiry: .relativeToNow)
        let past: Int64 = 1_600_000_000
        let token = entry(8, expiresAt: past + 3600)
        // An absolute expiry in Redis's past: Redis drops the entry at once, so a replay goes unseen.
        #expect(try absolute.insertIfAbsentNow(token, now: past))
        #expect(try absolute.insertIfAbsentNow(token, now: past))
        #expect(try relative.insertIfAbsentNow(token, now: past))
        #expect(try !relative.insertIfAbsentNow(token, now: past))
        guard case .integer(let ttl) = try server.command(["PTTL", RedisReplayCache.key(for: token, prefix: "idtk:replay:")]) else {
            Issue.record("PTTL did not answer an integer"); return
        }
        #expect(ttl > 3_590_000 && ttl <= 3_600_000)
    }

    @Test func passwordAndDatabaseAreUsed() throws {
        let server = try RedisServerProcess()
        #expect(try server.command(["CONFIG", "SET", "requirepass", "s3cret/pass"]) == .status("OK"))
        server.password = "s3cret/pass"
        let now = unixNow()
        let wrong = try RedisReplayCache(url: "redis://:nope@127.0.0.1:\(server.port)")
        let refusal = #expect(throws: TokenError.self) { try wrong.insertIfAbsentNow(entry(1, expiresAt: now + 60), now: now) }
        #expect(refusal?.message.contains("password") == true)

        let cache = try RedisReplayCache(url: "redis://:s3cret%2Fpass@127.0.0.1:\(server.port)/3")
        #expect(try cache.insertIfAbsentNow(entry(1, expiresAt: now + 60), now: now))
        #expect(try !cache.insertIfAbsentNow(entry(1, expiresAt: now + 60), now: now))
        let connection = try RedisConnection(host: "127.0.0.1", port: server.port, connectTimeoutMilliseconds: 500,
                                             commandTimeoutMilliseconds: 1000, username: nil, password: "s3cret/pass", database: 3)
        #expect(try connection.command([Array("DBSIZE".utf8)]) == .integer(1))
        let zero = try RedisConnection(host: "127.0.0.1", port: server.port, connectTimeoutMilliseconds: 500,
                                       commandTimeoutMilliseconds: 1000, username: nil, password: "s3cret/pass", database: 0)
        #expect(try zero.command([Array("DBSIZE".utf8)]) == .integer(0))
    }

    @Test func aServerThatDoesNotAnswerTimesOut() throws {
        // A socket that listens but never reads or replies: the connection opens, the reply never comes.
        let silent = try SilentListener()
        var configuration = RedisReplayCacheConfiguration(port: silent.port)
        configuration.commandTimeout = .milliseconds(200)
        let cache = RedisReplayCache(configuration: configuration)
        let now = unixNow()
        let started = Date()
        let error = #expect(throws: TokenError.self) { try cache.insertIfAbsentNow(entry(2, expiresAt: now + 60), now: now) }
        let elapsed = Date().timeIntervalSince(started)
        // Without the timeout the call would never return; the upper bound leaves a loaded machine room.
        #expect(elapsed >= 0.15 && elapsed < 15, "took \(elapsed) s")
        #expect(error?.code == .replayStoreUnavailable)
        #expect(error?.message.contains("timed out") == true, "\(String(describing: error?.message))")
    }
}

/// Where the replay-probe executable was built: next to the test binary.
func replayProbeExecutable() throws -> URL {
    var candidates: [URL] = []
    if let executable = Bundle.main.executableURL {
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent("replay-probe"))
    }
    for bundle in Bundle.allBundles {
        candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("replay-probe"))
    }
    if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) { return found }
    throw RedisServerProcess.Unavailable(description: "the replay-probe executable was not found next to the test binary "
        + "(looked in \(candidates.map(\.path))); build it with `swift build --product replay-probe`")
}


/// Reservations in Redis (DESIGN §6): `h:<owner>` with a short hold, then `1` until the entry's expiry, or deleted.
@Suite struct RedisReplayReservationTests {
    @Test func reservedThenHeldThenCommitted() async throws {
        let server = try RedisServerProcess()
        let cache = try RedisReplayCache(url: server.url)
        let now = unixNow()
        let e = entry(21, expiresAt: now + 3600)
        guard case .reserved(let mine) = try await cache.reserve(e, hold: 300, now: now) else {
            Issue.record("a free entry was not reserved")
            return
        }
        let key = RedisReplayCache.key(for: e, prefix: "idtk:replay:")
        guard case .integer(let holdMilliseconds) = try server.command(["PTTL", key]) else {
            Issue.record("no time-to-live on the hold")
            return
        }
        #expect(holdMilliseconds > 0 && holdMilliseconds <= 300_000)
        #expect(try await cache.reserve(e, hold: 300, now: now) == .held)
        // A consume-on-verify check sees the held entry as present.
        #expect(try !cache.insertIfAbsentNow(e, now: now))
        try await cache.commit(mine, now: now)
        #expect(try server.command(["GET", key]) == .string(Array("1".utf8)))
        guard case .integer(let lifetime) = try server.command(["PTTL", key]) else {
            Issue.record("no time-to-live on the committed entry")
            return
        }
        #expect(lifetime > 300_000, "committed for the entry's lifetime, not the hold's")
        #expect(try await cache.reserve(e, hold: 300, now: now) == .committed)
    }

    @Test func releaseOnlyByTheHolder() async throws {
        let server = try RedisServerProcess()
        let cache = try RedisReplayCache(url: server.url)
        let now = unixNow()
        let e = entry(22, expiresAt: now + 3600)
        guard case .reserved(let first) = try await cache.reserve(e, hold: 300, now: now) else {
            Issue.record("a free entry was not reserved")
            return
        }
        try await cache.release(first)
        guard case .reserved(let second) = try await cache.reserve(e, hold: 300, now: now) else {
            Issue.record("a released entry was not free")
            return
        }
        // The first holder's late release or commit leaves the second's hold alone.
        try await cache.release(first)
        try await cache.commit(first, now: now)
        #expect(try await cache.reserve(e, hold: 300, now: now) == .held)
        try await cache.commit(second, now: now)
        #expect(try await cache.reserve(e, hold: 300, now: now) == .committed)
    }

    /// A hold whose holder died (the process stopped in its handler) ends, and the next delivery reserves.
    @Test func aHoldEndsByItself() async throws {
        let server = try RedisServerProcess()
        let cache = try RedisReplayCache(url: server.url)
        let now = unixNow()
        let e = entry(23, expiresAt: now + 3600)
        guard case .reserved = try await cache.reserve(e, hold: 300, now: now) else {
            Issue.record("a free entry was not reserved")
            return
        }
        #expect(try await cache.reserve(e, hold: 300, now: now) == .held)
        // The hold's time runs out (Redis expires it), as when its holder died.
        let key = RedisReplayCache.key(for: e, prefix: "idtk:replay:")
        #expect(try server.command(["PEXPIRE", key, "1"]) == .integer(1))
        try await Task.sleep(for: .milliseconds(50))
        guard case .reserved = try await cache.reserve(e, hold: 300, now: now) else {
            Issue.record("the entry was not free once the hold ended")
            return
        }
    }

    @Test func exactlyOneOfConcurrentDeliveriesReserves() async throws {
        let server = try RedisServerProcess()
        let cache = try RedisReplayCache(url: server.url)
        let now = unixNow()
        let e = entry(24, expiresAt: now + 3600)
        let outcomes = try await withThrowingTaskGroup(of: ReplayReservation.Outcome.self) { group in
            for _ in 0..<8 { group.addTask { try await cache.reserve(e, hold: 300, now: now) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { if case .reserved = $0 { true } else { false } }.count == 1)
        #expect(outcomes.filter { $0 == .held }.count == 7)
    }

    /// Redis down: the reservation is refused `replay_store_unavailable` (never committed, never held), and counted.
    @Test func anUnreachableStoreCannotReserve() async throws {
        let port = try RedisServerProcess.freeLoopbackPort()
        let cache = try RedisReplayCache(url: "redis://127.0.0.1:\(port)")
        let now = unixNow()
        await #expect(throws: TokenError(.replayStoreUnavailable, "")) {
            _ = try await cache.reserve(entry(25, expiresAt: now + 3600), hold: 300, now: now)
        }
        #expect(cache.failureCount == 1 && cache.uncheckedCount == 0)
        let allowing = try RedisReplayCache(url: "redis://127.0.0.1:\(port)", failureMode: .allow)
        guard case .reserved = try await allowing.reserve(entry(25, expiresAt: now + 3600), hold: 300, now: now) else {
            Issue.record("in allow mode an unanswered reservation does not run the handler")
            return
        }
        #expect(allowing.uncheckedCount == 1)
    }
}
