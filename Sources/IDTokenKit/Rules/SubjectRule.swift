/// `sub` must be a non-empty string, at most ``maxLength`` Unicode scalars long when a maximum is set
/// (Firebase user IDs: 128).
public struct SubjectRule: ClaimRule, Equatable {
    /// The longest `sub` accepted, in characters, when there is a limit (Firebase: 128).
    public var maxLength: Int?

    /// A rule requiring a non-empty `sub` of at most `maxLength` characters.
    public init(maxLength: Int? = nil) { self.maxLength = maxLength }

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        // The usual case is answered from the member table: a string whose text is longer than its quotes is
        // not empty (`\u0000` is refused by the reader, so every escape decodes to at least one byte), and one
        // whose text is within the limit has no more scalars than that.
        if let (kind, length) = claims.kindAndTextLength(of: ClaimKey.sub), kind == .string, length > 2,
           maxLength.map({ length - 2 <= $0 }) ?? true {
            return
        }
        guard let sub = claims[ClaimKey.sub] else {
            throw TokenError(.invalidClaim, claim: "sub", "the \(context.tokenName) has no \"sub\" (subject) claim, so it names no user")
        }
        guard sub.kind == .string else {
            throw TokenError(.invalidClaim, claim: "sub", "the \"sub\" (subject) claim must be a string, not a \(sub.kind)")
        }
        guard !sub.isEmptyString else {
            throw TokenError(.invalidClaim, claim: "sub", "the \"sub\" (subject) claim is an empty string, so it names no user")
        }
        // A string has no more scalars than UTF-8 bytes, so only a long one needs counting.
        if let maxLength, sub.utf8ByteCountBound > maxLength, sub.unicodeScalarCount > maxLength {
            let count = sub.unicodeScalarCount
            throw TokenError(.invalidClaim, claim: "sub",
                             "the \"sub\" (subject) claim is \(count) characters long; a \(context.tokenName) has at most \(maxLength)")
        }
    }
}
