/// The event a Sign in with Apple server-to-server notification carries.
///
/// Apple posts `{"payload": "<JWT>"}` to the app's notification endpoint; the JWT's `events` claim is a JSON
/// *string* that holds one event object, for example
/// `"{\"type\":\"email-disabled\",\"sub\":\"001234.abcd.1234\",\"email\":\"x@privaterelay.appleid.com\",\"is_private_email\":\"true\",\"event_time\":1700000000000}"`.
/// ``parse(_:)`` is the one reader of that string: ``AppleNotificationRule`` refuses a notification it cannot
/// read, and ``VerifiedToken/appleNotification`` hands the verified event to the application.
public struct AppleNotification: Sendable, Equatable {
    /// What happened.
    public enum EventType: String, Sendable, CaseIterable {
        /// The user stopped forwarding email to their private relay address.
        case emailDisabled = "email-disabled"
        /// The user started forwarding email to their private relay address again.
        case emailEnabled = "email-enabled"
        /// The user stopped using Sign in with Apple with the app.
        case consentRevoked = "consent-revoked"
        /// The user deleted their Apple account.
        case accountDelete = "account-delete"

        /// Whether the event concerns the user's email (and so carries `email` and `is_private_email`).
        public var isEmailEvent: Bool { self == .emailDisabled || self == .emailEnabled }
    }

    /// The event type.
    public let type: EventType
    /// The user's identifier for the app (the identity token's `sub`).
    public let subject: String
    /// When the event happened, in milliseconds since 1970 (Apple's `event_time`).
    public let eventTime: Int64
    /// The email address concerned (email events).
    public let email: String?
    /// Whether ``email`` is a private relay address (email events).
    public let isPrivateEmail: Bool?

    /// The event in an `events` claim: a string holding a JSON object with `type` one of ``EventType``, a
    /// non-empty `sub`, an integral `event_time`, and for email events a string `email` and `is_private_email` (a
    /// boolean or `"true"`/`"false"`). An unknown `type` is refused, not ignored: a handler must not miss an event
    /// it cannot tell apart.
    /// - Throws: ``TokenError`` with ``TokenError/Code/invalidClaim`` and the claim `events`.
    public static func parse(_ events: JSONValue) throws(TokenError) -> AppleNotification {
        guard let text = events.stringBytes else {
            throw refusal("the \"events\" claim must be a string holding a JSON object (Apple sends the event as JSON text), not a \(events.kind)")
        }
        let object: JSONObject
        do { object = try JSONObject.parse(text, maxDepth: 4) } catch {
            throw refusal("the \"events\" claim is not JSON text holding an object: \(error)")
        }
        guard let typeValue = object["type"] else { throw refusal("the event in \"events\" has no \"type\"") }
        guard let typeName = typeValue.string, let type = EventType(rawValue: typeName) else {
            throw refusal("the event type \(Quoted.value(typeValue)) is not one of \(EventType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
        }
        guard let subject = object["sub"]?.string, !subject.isEmpty else {
            throw refusal("the \(type.rawValue) event has no \"sub\" (the user) as a non-empty string")
        }
        guard let time = object["event_time"], time.kind == .integer, let eventTime = time.int64, eventTime >= 0 else {
            throw refusal("the \(type.rawValue) event's \"event_time\" must be a non-negative integer (milliseconds since 1970)")
        }
        var email: String?
        var isPrivateEmail: Bool?
        if let value = object["email"] {
            guard let text = value.string else { throw refusal("the event's \"email\" must be a string, not a \(value.kind)") }
            email = text
        }
        if let value = object["is_private_email"] {
            guard let flag = AppleClaims.flexibleBool(value) else {
                throw refusal("the event's \"is_private_email\" must be true, false, \"true\" or \"false\", not \(Quoted.value(value))")
            }
            isPrivateEmail = flag
        }
        if type.isEmailEvent && (email == nil || isPrivateEmail == nil) {
            throw refusal("the \(type.rawValue) event must carry \"email\" and \"is_private_email\"")
        }
        return AppleNotification(type: type, subject: subject, eventTime: eventTime, email: email, isPrivateEmail: isPrivateEmail)
    }

    private static func refusal(_ message: String) -> TokenError {
        TokenError(.invalidClaim, claim: "events", message)
    }
}
