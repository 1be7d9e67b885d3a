/// A string claim that must be one of a list: Google's `hd` (the Workspace domain) and `azp` (the authorised
/// party), App Check's `sub` (the app ID).
public struct AllowedValuesRule: ClaimRule, Equatable {
    /// The claim.
    public var name: String { didSet { key = JSONKey(name) } }
    /// The values accepted.
    public var values: [String]
    /// Whether the token must carry the claim (`hd` when hosted domains are given), or only a claim it carries is
    /// checked (`azp`).
    public var required: Bool
    /// The code of a refusal for a value outside the list (``TokenError/Code/invalidClaim`` by default;
    /// ``TokenError/Code/wrongAudience`` for `azp`, which names an audience).
    public var code: TokenError.Code
    /// Advice appended to the refusal's message.
    public var hint: String
    private var key: JSONKey

    /// A rule accepting `claim` only when it is one of `values`.
    public init(_ name: String, oneOf values: [String], required: Bool, code: TokenError.Code = .invalidClaim, hint: String = "") {
        self.name = name
        self.values = values
        self.required = required
        self.code = code
        self.hint = hint
        self.key = JSONKey(name)
    }

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        if claims.string(key, isOneOf: values) == true { return }
        let suffix = hint.isEmpty ? "" : ". " + hint
        guard let value = claims[key] else {
            guard required else { return }
            throw TokenError(.invalidClaim, claim: name,
                             "the \(context.tokenName) has no \"\(name)\" claim; \(AudienceRule.list(values)) is required\(suffix)")
        }
        guard value.kind == .string else {
            throw TokenError(.invalidClaim, claim: name, "the \"\(name)\" claim must be a string, not a \(value.kind)")
        }
        throw TokenError(code, claim: name,
                         "the \(context.tokenName) has \"\(name)\" \(Quoted.value(value)), but only \(AudienceRule.list(values)) is accepted\(suffix)")
    }
}
