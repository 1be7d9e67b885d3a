/// The `events` claim of a Sign in with Apple server notification: present, and one event that
/// ``AppleNotification/parse(_:)`` reads.
public struct AppleNotificationRule: ClaimRule, Equatable {
    /// The rule; it has no options.
    public init() {}

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        guard let events = claims["events"] else {
            throw TokenError(.invalidClaim, claim: "events", "the \(context.tokenName) has no \"events\" claim, so it carries no event")
        }
        _ = try AppleNotification.parse(events)
    }
}
