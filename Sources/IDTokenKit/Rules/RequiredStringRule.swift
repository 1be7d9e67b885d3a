/// A claim that must be present as a non-empty string (Facebook Limited Login's `jti`).
public struct RequiredStringRule: ClaimRule, Equatable {
    /// The claim that must be a non-empty string.
    public var name: String { didSet { key = JSONKey(name) } }
    /// `name`, hashed once.
    private var key: JSONKey

    /// A rule requiring the claim `name` to be a non-empty string.
    public init(_ name: String) {
        self.name = name
        self.key = JSONKey(name)
    }

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        guard let value = claims[key] else {
            throw TokenError(.invalidClaim, claim: name, "the required \"\(name)\" claim is missing from the \(context.tokenName)")
        }
        guard value.kind == .string, !value.isEmptyString else {
            throw TokenError(.invalidClaim, claim: name, "the \"\(name)\" claim must be a non-empty string, not \(Quoted.value(value))")
        }
    }
}
