/// What the `aud` claim must hold.
///
/// A token is accepted when its `aud` is one of ``accepted``. When ``allowsArray`` is true (OIDC), `aud` may
/// also be an array, which must contain one of them; otherwise an array is refused, because the provider always
/// issues a single string.
public struct AudienceRule: Sendable, Equatable {
    /// The audiences accepted; a token is accepted when its `aud` is (or, as an array, contains) one of them.
    public var accepted: [String]
    /// Whether `aud` may be an array (OpenID Connect allows it; Firebase, Apple and Facebook send a string).
    public var allowsArray: Bool
    /// Whether `aud` must be an array (Firebase App Check always sends one).
    public var requiresArray: Bool

    /// A rule accepting the audiences `accepted`.
    public init(accepted: [String], allowsArray: Bool, requiresArray: Bool = false) {
        self.accepted = accepted
        self.allowsArray = allowsArray || requiresArray
        self.requiresArray = requiresArray
    }

    /// Exactly this string.
    public static func exactly(_ audience: String) -> AudienceRule { AudienceRule(accepted: [audience], allowsArray: false) }

    /// One of these strings, as a string (`allowsArray: false`) or inside an array.
    public static func oneOf(_ audiences: [String], allowsArray: Bool) -> AudienceRule {
        AudienceRule(accepted: audiences, allowsArray: allowsArray)
    }

    func matches(_ value: JSONValue) -> Bool {
        for audience in accepted where value.stringEquals(audience) { return true }
        return false
    }

    /// Checks `aud` in `claims`.
    func check(_ claims: JSONObject, profile: Profile) throws(TokenError) {
        // The usual case, one accepted audience as a string, is answered in place; arrays and refusals read the
        // claim as a value.
        if !requiresArray, claims.string(ClaimKey.aud, isOneOf: accepted) == true { return }
        guard let aud = claims[ClaimKey.aud] else {
            throw TokenError(.invalidClaim, claim: "aud",
                             "the \(profile.tokenName) has no \"aud\" (audience) claim. \(profile.audienceHint)")
        }
        switch aud.kind {
        case .string:
            guard !requiresArray else {
                throw TokenError(.wrongAudience, claim: "aud",
                                 "the \(profile.tokenName) has a string as its \"aud\" (audience) claim, but this provider issues an array. \(profile.audienceHint)")
            }
            guard matches(aud) else {
                let accepted = self.accepted
                throw TokenError(.wrongAudience, claim: "aud",
                                 "the \(profile.tokenName) has incorrect \"aud\" (audience) claim: expected \(AudienceRule.list(accepted)) but got \(Quoted.value(aud)). \(profile.audienceHint)")
            }
        case .array:
            guard allowsArray else {
                throw TokenError(.wrongAudience, claim: "aud",
                                 "the \(profile.tokenName) has an array as its \"aud\" (audience) claim, but this provider issues a single string. \(profile.audienceHint)")
            }
            let elements = aud.array ?? []
            for element in elements where element.kind != .string {
                throw TokenError(.invalidClaim, claim: "aud", "the \"aud\" (audience) array holds a \(element.kind) instead of strings")
            }
            guard elements.contains(where: matches) else {
                let accepted = self.accepted
                throw TokenError(.wrongAudience, claim: "aud",
                                 "the \(profile.tokenName) has incorrect \"aud\" (audience) claim: expected \(AudienceRule.list(accepted)) but got \(Quoted.value(aud)). \(profile.audienceHint)")
            }
        default:
            throw TokenError(.invalidClaim, claim: "aud", "the \"aud\" (audience) claim must be a string, not a \(aud.kind)")
        }
    }

    static func list(_ values: [String]) -> String {
        values.count == 1 ? "\"\(values[0])\"" : "one of " + values.map { "\"\($0)\"" }.joined(separator: ", ")
    }
}
