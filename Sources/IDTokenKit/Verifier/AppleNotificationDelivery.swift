import Foundation

/// What became of one POST that Sign in with Apple made to a server-to-server notification endpoint
/// (``MultiProfileVerifier/deliverAppleNotification(body:now:hold:handler:)``).
///
/// The handler runs at least once per notification, and exactly once when nothing fails: a delivery reserves the
/// notification in the profile's replay cache while its handler runs, commits it when the handler returned and
/// releases it when the handler threw, so that Apple's retry runs the handler again.
public enum AppleNotificationDelivery: Sendable {
    /// A notification seen for the first time, whose handler returned: answer 200.
    case new(VerifiedToken, AppleNotification)
    /// A notification whose handler returned before (its reservation committed): answer 200, nothing to do.
    case repeated
    /// A notification another delivery is handling right now: answer 503 with `Retry-After`, never 200, since that
    /// delivery's handler may still fail and then this one's retry must run it.
    case inProgress

    /// The most bytes of a notification body read (a notification is well under 4 KiB).
    public static let maxBodyBytes = 64 * 1024

    /// How long a delivery holds its notification while the handler runs, by default: a process that dies inside
    /// the handler leaves a hold that ends after this, and Apple's next retry runs the handler.
    public static let defaultHold: Duration = .seconds(300)

    /// The JWT of the body Apple posts, `{"payload": "<JWT>"}`.
    /// - Throws: ``TokenError`` `malformed` for any other body.
    public static func payload(ofBody body: [UInt8]) throws(TokenError) -> String {
        guard body.count <= maxBodyBytes else {
            throw TokenError(.tokenTooLarge, "the notification body is larger than \(maxBodyBytes) bytes")
        }
        guard let object = try? JSONObject.parse(body, maxDepth: 4), let payload = object["payload"]?.string, !payload.isEmpty else {
            throw TokenError(.malformed, "the body is not Sign in with Apple's notification, {\"payload\": \"<JWT>\"}")
        }
        return payload
    }
}

extension MultiProfileVerifier {
    /// Verifies the body Sign in with Apple posts to a server-to-server notification endpoint and runs `handler` on
    /// its event: the JWT by the profile its issuer names (an ``Profile/appleNotification(clientIDs:)`` profile), with
    /// that profile's keys; then, when the profile has a replay cache, the notification is reserved there for
    /// `hold` while `handler` runs, committed when it returns and released when it throws. The Vapor and
    /// Hummingbird integrations' notification routes answer with this.
    ///
    /// - Returns: ``AppleNotificationDelivery/new(_:_:)`` once `handler` returned;
    ///   ``AppleNotificationDelivery/repeated`` for a notification handled before;
    ///   ``AppleNotificationDelivery/inProgress`` while another delivery of it runs the handler.
    /// - Throws: ``TokenError`` when the body or the notification is refused (a token that is no notification is
    ///   `wrong_issuer`) or the replay cache cannot answer (`replay_store_unavailable`: the handler did not run);
    ///   whatever `handler` threw, after the reservation was released.
    public func deliverAppleNotification(body: [UInt8], now: Date, hold: Duration = AppleNotificationDelivery.defaultHold,
                                         handler: (VerifiedToken, AppleNotification) async throws -> Void)
        async throws -> AppleNotificationDelivery {
        let token = try AppleNotificationDelivery.payload(ofBody: body)
        let outcome = await withoutReplayCaches.verify(token, now: now)
        let verified = try outcome.get()
        guard let event = verified.appleNotification else {
            throw TokenError(.wrongIssuer, claim: "iss", "the payload is a \(verified.provider.tokenName), not a Sign in with Apple server notification; the notification route needs an apple-notification profile")
        }
        guard let cache = outcome.profile.flatMap(member(named:))?.verifier.replayCache,
              let entry = outcome.replayEntry(of: token) else {
            try await handler(verified, event)
            return .new(verified, event)
        }
        let at = Int64(now.timeIntervalSince1970.rounded(.down))
        switch try await cache.reserve(entry, hold: max(1, hold.components.seconds), now: at) {
        case .committed:
            return .repeated
        case .held:
            return .inProgress
        case .reserved(let reservation):
            do {
                try await handler(verified, event)
            } catch {
                // When the release cannot be made, the hold ends by itself and a later retry runs the handler.
                try? await cache.release(reservation)
                throw error
            }
            // The handler's work is done: a commit the store cannot make leaves the hold to end, after which a
            // delivery of the same notification would run the handler again (at least once, never lost).
            try? await cache.commit(reservation, now: at)
            return .new(verified, event)
        }
    }
}
