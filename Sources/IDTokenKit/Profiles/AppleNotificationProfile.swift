extension Profile {
    /// How long after its `iat` an Apple server notification without `exp` is accepted (Apple's documented
    /// notification has none): a day.
    public static let appleNotificationLifetime: Double = 24 * 3600

    /// Sign in with Apple server-to-server notifications for your apps: what Apple posts, as `{"payload": "<JWT>"}`,
    /// to the app's notification endpoint when a user disables or enables email forwarding, revokes consent or
    /// deletes their account.
    ///
    /// Apple's sign-in issuer and keys; RS256; `aud` one of `clientIDs`; `iat` and `jti` required; `exp` checked
    /// when present, and a notification without one is accepted for ``appleNotificationLifetime`` after `iat`;
    /// `events` a string holding one event (``AppleNotification/parse(_:)``), whose `type` must be one of the four
    /// Apple documents. The verified event is ``VerifiedToken/appleNotification``. With a replay cache each
    /// notification is processed once.
    public static func appleNotification(clientIDs: [String]) -> Profile {
        Profile(
            provider: .appleNotification,
            issuers: [appleIssuer],
            algorithms: [.rs256],
            audience: .oneOf(clientIDs, allowsArray: false),
            requiresKeyID: true,
            time: TimeRules(expiringAfterIssueWhenUnbounded: appleNotificationLifetime),
            rules: [RequiredStringRule("jti"), AppleNotificationRule()],
            nonceMode: nil,
            keysURL: appleJWKSURL,
            audienceHint: "The audience is the app's bundle ID or Services ID whose notification endpoint Apple calls",
            issuerHint: "Only notifications signed by Sign in with Apple are accepted")
    }
}

extension ProviderDefinition {
    static let appleNotification = ProviderDefinition(
        .appleNotification, tokenName: "Sign in with Apple server notification",
        summary: "Sign in with Apple server-to-server notifications (the `payload` Apple posts)",
        needs: [audience("the bundle ID or Services ID")],
        note: "Apple posts this to the app's server-to-server notification endpoint as {\"payload\": \"<JWT>\"}",
        kindOfToken: { claims in claims.contains(ClaimKey.events) },
        make: { options, _ in .appleNotification(clientIDs: options.audiences) },
        recognizes: { issuer, _ in issuer == Profile.appleIssuer },
        suggests: { _, audience, _ in audience.first.map { ["--audience", $0] } ?? [] })
}
