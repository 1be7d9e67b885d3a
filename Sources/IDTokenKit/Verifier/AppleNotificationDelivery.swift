import Foundation

/// What became of one POST that Sign in with Apple made to a server-to-server notification endpoint.
public enum AppleNotificationDelivery: Sendable {
    /// A notification seen for the first time: handle its event.
    case new(VerifiedToken, AppleNotification)
    /// A notification the verifier's replay cache has seen before (Apple delivered it again): answer 200 and do
    /// nothing more.
    case repeated

    /// The most bytes of a notification body read (a notification is well under 4 KiB).
    public static let maxBodyBytes = 64 * 1024

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
    /// Verifies the body Sign in with Apple posts to a server-to-server notification endpoint: its JWT by the
    /// profile its issuer names (an ``Profile/appleNotification(clientIDs:)`` profile), with that profile's keys and
    /// replay cache. The Vapor and Hummingbird integrations' notification routes answer with this.
    /// - Returns: ``AppleNotificationDelivery/new(_:_:)`` with the verified event, or
    ///   ``AppleNotificationDelivery/repeated`` when the replay cache has seen the notification.
    /// - Throws: ``TokenError`` when the body or the notification is refused (a token that is no notification is
    ///   `wrong_issuer`).
    public func verifyAppleNotification(body: [UInt8], now: Date) async throws(TokenError) -> AppleNotificationDelivery {
        let token = try AppleNotificationDelivery.payload(ofBody: body)
        let outcome = await verify(token, now: now)
        if outcome.error?.code == .replayed { return .repeated }
        let verified = try outcome.get()
        guard let event = verified.appleNotification else {
            throw TokenError(.wrongIssuer, claim: "iss", "the payload is a \(verified.provider.tokenName), not a Sign in with Apple server notification; the notification route needs an apple-notification profile")
        }
        return .new(verified, event)
    }
}
