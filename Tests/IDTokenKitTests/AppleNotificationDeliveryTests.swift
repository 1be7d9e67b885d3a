import Foundation
import IDTokenKit
import Testing

/// The body Sign in with Apple posts to a notification endpoint, read and verified by
/// ``MultiProfileVerifier/deliverAppleNotification(body:now:hold:handler:)``: the one decision the Vapor and Hummingbird
/// routes map, with the reservation around the handler (at least once, exactly once when nothing fails).
@Suite struct AppleNotificationDeliveryTests {
    static func valid(_ file: String) throws -> (token: String, keys: JWKSet, at: Date) {
        let test = try #require(VectorCase.load("generated/\(file).json").first { $0.id == "\(file)/valid" })
        return (try #require(test.json["token"]?.string), try VectorFiles.keySet(try #require(test.json["keys"])),
                Date(timeIntervalSince1970: Double(try #require(test.json["at"]?.int64))))
    }

    static func code(_ body: () throws(TokenError) -> String) -> TokenError.Code? {
        do { _ = try body(); return nil } catch { return error.code }
    }

    @Test func onlyApplesBodyShapeIsRead() throws {
        #expect(try AppleNotificationDelivery.payload(ofBody: Array("{\"payload\": \"a.b.c\"}".utf8)) == "a.b.c")
        for body in ["payload=a.b.c", "{\"payload\": 5}", "{\"payload\": \"\"}", "{\"signedPayload\": \"a.b.c\"}", "[\"a.b.c\"]", ""] {
            #expect(Self.code { () throws(TokenError) in try AppleNotificationDelivery.payload(ofBody: Array(body.utf8)) } == .malformed, "\(body)")
        }
        let huge = Array("{\"payload\": \"".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: AppleNotificationDelivery.maxBodyBytes) + Array("\"}".utf8)
        #expect(Self.code { () throws(TokenError) in try AppleNotificationDelivery.payload(ofBody: huge) } == .tokenTooLarge)
    }

    static func notificationVerifier(_ keys: JWKSet, cache: (any ReplayCache)? = MemoryReplayCache(capacity: 10)) throws -> MultiProfileVerifier {
        MultiProfileVerifier(try IDTokenVerifier(profile: .appleNotification(clientIDs: ["com.example.idtk.ios"]),
                                                 keys: StaticKeySource(keys), replayCache: cache))
    }

    struct HandlerFailed: Error {}

    /// Counts the handler's runs; fails the runs it is told to.
    final class Handler: @unchecked Sendable {
        private let lock = NSLock()
        private var runs = 0
        private var failing: Set<Int>
        init(failing: Set<Int> = []) { self.failing = failing }
        var count: Int { lock.withLock { runs } }
        func run() throws {
            let run = lock.withLock { runs += 1; return runs }
            if failing.contains(run) { throw HandlerFailed() }
        }
    }

    @Test func aNotificationIsNewOnceThenRepeated() async throws {
        let (token, keys, at) = try Self.valid("apple-notification")
        let verifier = try Self.notificationVerifier(keys)
        let body = Array("{\"payload\":\"\(token)\"}".utf8)
        let handler = Handler()
        guard case .new(let verified, let event) = try await verifier.deliverAppleNotification(body: body, now: at, handler: { _, _ in try handler.run() }) else {
            Issue.record("the first delivery is not new")
            return
        }
        #expect(event.type == .emailDisabled && event.isPrivateEmail == true && event.email?.hasSuffix("@privaterelay.appleid.com") == true)
        #expect(verified.subject == event.subject && verified.provider == .appleNotification)
        guard case .repeated = try await verifier.deliverAppleNotification(body: body, now: at, handler: { _, _ in try handler.run() }) else {
            Issue.record("the second delivery is not a repeat")
            return
        }
        #expect(handler.count == 1)
    }

    /// A handler that throws releases the notification: Apple's retry runs it again, and only then is it done.
    @Test func aFailedHandlerIsRunAgainByTheRetry() async throws {
        let (token, keys, at) = try Self.valid("apple-notification")
        let verifier = try Self.notificationVerifier(keys)
        let body = Array("{\"payload\":\"\(token)\"}".utf8)
        let handler = Handler(failing: [1])
        await #expect(throws: HandlerFailed.self) {
            _ = try await verifier.deliverAppleNotification(body: body, now: at, handler: { _, _ in try handler.run() })
        }
        guard case .new = try await verifier.deliverAppleNotification(body: body, now: at, handler: { _, _ in try handler.run() }) else {
            Issue.record("the retry after a failed handler did not run it")
            return
        }
        guard case .repeated = try await verifier.deliverAppleNotification(body: body, now: at, handler: { _, _ in try handler.run() }) else {
            Issue.record("a third delivery after the handler succeeded is not a repeat")
            return
        }
        #expect(handler.count == 2)
    }

    /// While one delivery runs the handler, another of the same notification is told it is in progress (a 503 for
    /// the routes), not repeated: the first may still fail.
    @Test func aDeliveryWhileTheHandlerRunsIsInProgress() async throws {
        let (token, keys, at) = try Self.valid("apple-notification")
        let verifier = try Self.notificationVerifier(keys)
        let body = Array("{\"payload\":\"\(token)\"}".utf8)
        let handler = Handler()
        let inside = AsyncStream<Void>.makeStream()
        let proceed = AsyncStream<Void>.makeStream()
        let first = Task {
            try await verifier.deliverAppleNotification(body: body, now: at) { _, _ in
                try handler.run()
                inside.continuation.yield()
                for await _ in proceed.stream { break }
            }
        }
        for await _ in inside.stream { break }
        guard case .inProgress = try await verifier.deliverAppleNotification(body: body, now: at, handler: { _, _ in try handler.run() }) else {
            Issue.record("a delivery while the handler runs is not in progress")
            return
        }
        proceed.continuation.yield()
        guard case .new = try await first.value else {
            Issue.record("the first delivery did not complete")
            return
        }
        #expect(handler.count == 1)
    }

    /// A hold whose owner died (the process stopped inside the handler) ends, and the next delivery runs the handler.
    @Test func aHoldLeftByADeadDeliveryEnds() async throws {
        let (token, keys, at) = try Self.valid("apple-notification")
        let cache = MemoryReplayCache(capacity: 10)
        let verifier = try Self.notificationVerifier(keys, cache: cache)
        let body = Array("{\"payload\":\"\(token)\"}".utf8)
        // The dead delivery: its reservation taken, never committed or released.
        let outcome = await verifier.withoutReplayCaches.verify(token, now: at)
        let entry = try #require(outcome.replayEntry(of: token))
        let now = Int64(at.timeIntervalSince1970)
        guard case .reserved = try await cache.reserve(entry, hold: 30, now: now) else {
            Issue.record("the first reservation was refused")
            return
        }
        let handler = Handler()
        guard case .inProgress = try await verifier.deliverAppleNotification(body: body, now: at.addingTimeInterval(29), handler: { _, _ in try handler.run() }) else {
            Issue.record("a delivery during the dead hold is not in progress")
            return
        }
        guard case .new = try await verifier.deliverAppleNotification(body: body, now: at.addingTimeInterval(30), handler: { _, _ in try handler.run() }) else {
            Issue.record("a delivery after the hold ended did not run the handler")
            return
        }
        #expect(handler.count == 1)
    }

    /// A store that cannot answer is never a repeat: the delivery is refused `replay_store_unavailable` and the
    /// handler does not run.
    @Test func aStoreThatCannotAnswerIsNeverARepeat() async throws {
        let (token, keys, at) = try Self.valid("apple-notification")
        let full = MemoryReplayCache(capacity: 1)
        let other = ReplayEntry(issuer: "https://appleid.apple.com", tokenDigest: Array(repeating: 7, count: 32),
                                expiresAt: Int64(at.timeIntervalSince1970) + 3600)
        #expect(try full.insertIfAbsentNow(other, now: Int64(at.timeIntervalSince1970)))
        let verifier = try Self.notificationVerifier(keys, cache: full)
        let handler = Handler()
        do {
            _ = try await verifier.deliverAppleNotification(body: Array("{\"payload\":\"\(token)\"}".utf8), now: at,
                                                            handler: { _, _ in try handler.run() })
            Issue.record("a delivery was judged although the store was full")
        } catch let error as TokenError {
            #expect(error.code == .replayStoreUnavailable)
        }
        #expect(handler.count == 0)
    }

    @Test func aTokenThatIsNoNotificationIsRefused() async throws {
        let (token, keys, at) = try Self.valid("apple")
        let verifier = MultiProfileVerifier(try IDTokenVerifier(profile: .apple(clientIDs: ["com.example.idtk.ios"]), keys: StaticKeySource(keys)))
        do {
            _ = try await verifier.deliverAppleNotification(body: Array("{\"payload\":\"\(token)\"}".utf8), now: at) { _, _ in
                Issue.record("the handler ran for an identity token")
            }
            Issue.record("an identity token was taken for a notification")
        } catch let error as TokenError {
            #expect(error.code == .wrongIssuer)
        }
    }
}
