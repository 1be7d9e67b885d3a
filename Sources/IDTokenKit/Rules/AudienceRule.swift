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
    /// The claim that names the audience: `aud`, or `client_id` in a token without one (a Cognito access token).
    public var claim: String { didSet { key = JSONKey(claim) } }
    private var key: JSONKey

    /// A rule accepting the audiences `accepted` in the claim `claim`.
    public init(accepted: [String], allowsArray: Bool, requiresArray: Bool = false, claim: String = "aud") {
        self.accepted = accepted
        self.allowsArray = allowsArray || requiresArray
        self.requiresArray = requiresArray
        self.claim = claim
        self.key = JSONKey(claim)
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
        if !requiresArray, claims.string(key, isOneOf: accepted) == true { return }
        guard let aud = claims[key] else {
            throw TokenError(.invalidClaim, claim: claim,
                             "the \(profile.tokenName) has no \"\(claim)\" (audience) claim. \(profile.audienceHint)")
        }
        switch aud.kind {
        case .string:
            guard !requiresArray else {
                throw TokenError(.wrongAudience, claim: claim,
                                 "the \(profile.tokenName) has a string as its \"\(claim)\" (audience) claim, but this provider issues an array. \(profile.audienceHint)")
            }
            guard matches(aud) else {
                let accepted = self.accepted
                throw TokenError(.wrongAudience, claim: claim,
                                 "the \(profile.tokenName) has incorrect \"\(claim)\" (audience) claim: expected \(AudienceRule.list(accepted)) but got \(Quoted.value(aud)). \(profile.audienceHint)")
            }
        case .array:
            guard allowsArray else {
                throw TokenError(.wrongAudience, claim: claim,
                                 "the \(profile.tokenName) has an array as its \"\(claim)\" (audience) claim, but this provider issues a single string. \(profile.audienceHint)")
            }
            let elements = aud.array ?? []
            for element in elements where element.kind != .string {
                throw TokenError(.invalidClaim, claim: claim, "the \"\(claim)\" (audience) array holds a \(element.kind) instead of strings")
            }
            guard elements.contains(where: matches) else {
                let accepted = self.accepted
                throw TokenError(.wrongAudience, claim: claim,
                                 "the \(profile.tokenName) has incorrect \"\(claim)\" (audience) claim: expected \(AudienceRule.list(accepted)) but got \(Quoted.value(aud)). \(profile.audienceHint)")
            }
        default:
            throw TokenError(.invalidClaim, claim: claim, "the \"\(claim)\" (audience) claim must be a string, not a \(aud.kind)")
        }
    }

    static func list(_ values: [String]) -> String {
        values.count == 1 ? "\"\(values[0])\"" : "one of " + values.map { "\"\($0)\"" }.joined(separator: ", ")
    }
}
