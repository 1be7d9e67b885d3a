import Foundation
import IDTokenKit
import IDTokenKitRedis
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The handler a notification route runs in the delivery tests: counts its runs, fails those it is told to, and
/// can keep its first run inside until the test lets it go.
final class NotificationHandler: @unchecked Sendable {
    struct Failed: Error {}

    private let lock = NSLock()
    private var runs = 0
    private let failing: Set<Int>
    private let holdsFirstRun: Bool
    let entered = AsyncStream<Void>.makeStream()
    let proceed = AsyncStream<Void>.makeStream()

    init(failing: Set<Int> = [], holdsFirstRun: Bool = false) {
        self.failing = failing
        self.holdsFirstRun = holdsFirstRun
    }

    var count: Int { lock.withLock { runs } }

    func run() async throws {
        let run = lock.withLock { runs += 1; return runs }
        if holdsFirstRun && run == 1 {
            entered.continuation.yield()
            for await _ in proceed.stream { break }
        }
        if failing.contains(run) { throw Failed() }
    }
}

/// What a POST of a notification was answered.
struct DeliveryAnswer: Sendable {
    let status: Int
    let retryAfter: String?
}

/// The delivery guarantees of DESIGN §6 over real HTTP, the same for every framework: `post` sends a body to the
/// application's notification route, whose handler is `handler`. The handler runs at least once per notification
/// and exactly once when nothing fails; a duplicate is answered 200 only once the handler succeeded.
enum NotificationDeliveries {
    static func body(_ token: String) -> String { "{\"payload\": \"\(token)\"}" }

    /// A handler that throws on the first delivery and returns on the second is called twice: the first answer is a
    /// 500 (Apple retries), the second 200, and a third delivery is 200 without the handler.
    static func aFailedHandlerRunsAgain(_ token: String, handler: NotificationHandler,
                                        post: @Sendable (String) async throws -> DeliveryAnswer) async throws {
        #expect(try await post(body(token)).status == 500)
        #expect(try await post(body(token)).status == 200)
        #expect(try await post(body(token)).status == 200)
        #expect(handler.count == 2)
    }

    /// Two deliveries at once: the handler runs once, and the other is answered 503 with Retry-After (never 200:
    /// the first may still fail).
    static func concurrentDeliveriesRunTheHandlerOnce(_ token: String, handler: NotificationHandler,
                                                      post: @escaping @Sendable (String) async throws -> DeliveryAnswer) async throws {
        let first = Task { try await post(body(token)) }
        for await _ in handler.entered.stream { break }
        let second = try await post(body(token))
        #expect(second.status == 503 && second.retryAfter != nil, "\(second)")
        handler.proceed.continuation.yield()
        #expect(try await first.value.status == 200)
        #expect(handler.count == 1)
    }

    /// Redis down during a delivery: 503, the handler not called; Redis back: the retry runs the handler.
    static func redisDownThenBack(_ token: String, handler: NotificationHandler, redis: RedisServer,
                                  post: @Sendable (String) async throws -> DeliveryAnswer) async throws {
        let down = try await post(body(token))
        #expect(down.status == 503 && down.retryAfter != nil, "\(down)")
        #expect(handler.count == 0)
        try redis.start()
        // The replay cache's pool reconnects once its reconnect delay (250 ms) has passed; until then, 503 again.
        var statuses: [Int] = []
        for _ in 0..<50 {
            statuses.append(try await post(body(token)).status)
            if statuses.last != 503 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(statuses.last == 200 && statuses.dropLast().allSatisfy { $0 == 503 }, "\(statuses)")
        #expect(try await post(body(token)).status == 200)
        #expect(handler.count == 1)
    }

    /// A hold left by a delivery whose process died inside the handler (reserved, never committed or released)
    /// ends, and the retry after it runs the handler.
    static func aDeadDeliverysHoldEnds(_ token: String, entry: ReplayEntry, at: Date, cache: RedisReplayCache, redis: RedisServer,
                                       handler: NotificationHandler, post: @Sendable (String) async throws -> DeliveryAnswer) async throws {
        guard case .reserved = try await cache.reserve(entry, hold: 300, now: Int64(at.timeIntervalSince1970)) else {
            Issue.record("the dead delivery's reservation was refused")
            return
        }
        #expect(try await post(body(token)).status == 503)
        // The hold's time runs out (Redis expires it).
        #expect(redis.cli(["PEXPIRE", RedisReplayCache.key(for: entry, prefix: "idtk:replay:"), "1"]) == "1")
        try await Task.sleep(for: .milliseconds(50))
        #expect(try await post(body(token)).status == 200)
        #expect(handler.count == 1)
    }

    /// The replay entry of a notification token, as the delivery reserves it.
    static func entry(_ token: String, profile: Profile, keys: JWKSet, at: Date) async throws -> ReplayEntry {
        let outcome = await MultiProfileVerifier(try IDTokenVerifier(profile: profile, keys: keys)).verify(token, now: at)
        return try #require(outcome.replayEntry(of: token))
    }
}

/// The delivery scenarios, each on a fresh notification route that a framework's tests set up: `route` is given the
/// handler and the replay cache the route uses, and calls its body with the notification's vector case and a
/// `post` of a body to the route over real HTTP.
enum NotificationScenario: String, CaseIterable, Sendable {
    case aFailedHandlerRunsAgain, concurrentDeliveriesRunTheHandlerOnce, redisDownThenBack, aDeadDeliverysHoldEnds

    typealias Post = @Sendable (String) async throws -> DeliveryAnswer
    typealias Route = (NotificationHandler, any ReplayCache,
                       @escaping @Sendable (VectorCase, @escaping Post) async throws -> Void) async throws -> Void

    func run(on route: Route) async throws {
        switch self {
        case .aFailedHandlerRunsAgain:
            let handler = NotificationHandler(failing: [1])
            try await route(handler, MemoryReplayCache(capacity: 100)) { valid, post in
                try await NotificationDeliveries.aFailedHandlerRunsAgain(valid.token, handler: handler, post: post)
            }
        case .concurrentDeliveriesRunTheHandlerOnce:
            let handler = NotificationHandler(holdsFirstRun: true)
            try await route(handler, MemoryReplayCache(capacity: 100)) { valid, post in
                try await NotificationDeliveries.concurrentDeliveriesRunTheHandlerOnce(valid.token, handler: handler, post: post)
            }
        case .redisDownThenBack:
            let redis = try RedisServer()
            let handler = NotificationHandler()
            try await route(handler, try RedisReplayCache(url: redis.url, expiry: .relativeToNow)) { valid, post in
                try await NotificationDeliveries.redisDownThenBack(valid.token, handler: handler, redis: redis, post: post)
            }
        case .aDeadDeliverysHoldEnds:
            let redis = try RedisServer()
            try redis.start()
            let cache = try RedisReplayCache(url: redis.url, expiry: .relativeToNow)
            let handler = NotificationHandler()
            try await route(handler, cache) { valid, post in
                let at = Date(timeIntervalSince1970: valid.at)
                let entry = try await NotificationDeliveries.entry(valid.token, profile: valid.profile,
                                                                   keys: try Vectors.keys(valid.keysPath!), at: at)
                try await NotificationDeliveries.aDeadDeliverysHoldEnds(valid.token, entry: entry, at: at, cache: cache, redis: redis,
                                                                        handler: handler, post: post)
            }
        }
    }
}

/// A real `redis-server` on a loopback port of its own, started and stopped by a test (`redis-cli` stops it).
final class RedisServer: @unchecked Sendable {
    let port: Int
    private var process: ChildProcess?
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idtk-redis-\(UUID().uuidString)")

    var url: String { "redis://127.0.0.1:\(port)" }

    /// A port nobody listens on, for a server started later.
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the server and waits until it answers.
    func start() throws {
        let process = try ChildProcess("/usr/bin/redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "",
                                                                  "--appendonly", "no", "--dir", directory.path])
        self.process = process
        var attempts = 0
        while cli(["PING"]) != "PONG" && attempts < 200 {
            attempts += 1
            usleep(50_000)
        }
    }

    /// Stops the server (SHUTDOWN NOSAVE, as a client would; SIGKILL if it lingers).
    func stop() {
        guard let process else { return }
        self.process = nil
        _ = cli(["SHUTDOWN", "NOSAVE"])
        var waited = 0
        while process.isRunning && waited < 100 {
            waited += 1
            usleep(50_000)
        }
        if process.isRunning { process.send(SIGKILL) }
        process.wait()
    }

    /// One `redis-cli` command's answer.
    func cli(_ arguments: [String]) -> String? {
        guard let process = try? ChildProcess("/usr/bin/redis-cli", ["-p", String(port)] + arguments, standardOutput: .pipe) else { return nil }
        let data = process.standardOutput!.readDataToEndOfFile()
        process.wait()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
