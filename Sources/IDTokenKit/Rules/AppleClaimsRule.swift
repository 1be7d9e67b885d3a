/// The types of Sign in with Apple's own claims, when present.
///
/// `email_verified`, `is_private_email` and `nonce_supported` are booleans, or in tokens issued before about
/// 2022 the strings `"true"` / `"false"`; any other value is refused. `real_user_status` is 0 (unsupported),
/// 1 (unknown) or 2 (likely real). `email` is a string.
public struct AppleClaimsRule: ClaimRule, Equatable {
    /// The rule; it has no options.
    public init() {}

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        // The usual token passes in one walk over its members (a look-up per claim would walk them five times,
        // to the end for each claim that is absent); any member that is not plainly right sends the token through
        // the checks below, which find and explain the first problem.
        if AppleClaimsRule.plainlyValid(claims) { return }
        try AppleClaimsRule.checkFlexibleBool(claims, ClaimKey.emailVerified)
        try AppleClaimsRule.checkFlexibleBool(claims, ClaimKey.isPrivateEmail)
        try AppleClaimsRule.checkFlexibleBool(claims, ClaimKey.nonceSupported)
        if case .integer(let status) = claims.number(ClaimKey.realUserStatus), (0...2).contains(status) {
            // The usual value, read in place.
        } else if let status = claims[ClaimKey.realUserStatus] {
            guard let value = status.int64, (0...2).contains(value) else {
                throw TokenError(.invalidClaim, claim: "real_user_status",
                                 "the \"real_user_status\" claim must be 0, 1 or 2, not \(Quoted.value(status))")
            }
        }
        if let kind = claims.kind(of: ClaimKey.email), kind != .string {
            throw TokenError(.invalidClaim, claim: "email", "the \"email\" claim must be a string, not a \(kind)")
        }
    }

    /// Whether a string's text (quotes included) is `"true"` or `"false"`, byte by byte.
    /// Whether every one of the five claims checked here is absent or written in its usual form: a boolean, or
    /// "true" or "false" unescaped; `real_user_status` the integer 0, 1 or 2; `email` a string.
    static func plainlyValid(_ claims: JSONObject) -> Bool {
        var plain = true
        claims.forEachMember { name, kind, text in
            // Names compared only at the lengths of the five claims (5, 14, 15, 16).
            switch name.count {
            case 5:
                if kind != .string, ClaimKey.email.isName(name) { plain = false }
            case 14, 15:
                if !isFlexibleBool(kind, text), ClaimKey.emailVerified.isName(name) || ClaimKey.nonceSupported.isName(name) {
                    plain = false
                }
            case 16:
                if ClaimKey.realUserStatus.isName(name) {
                    if !(kind == .integer && text.count == 1 && (UInt8(ascii: "0")...UInt8(ascii: "2")).contains(text[0])) { plain = false }
                } else if !isFlexibleBool(kind, text), ClaimKey.isPrivateEmail.isName(name) {
                    plain = false
                }
            default:
                break
            }
        }
        return plain
    }

    private static func isFlexibleBool(_ kind: JSONKind, _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        kind == .true || kind == .false || (kind == .string && isTrueOrFalse(text))
    }

    private static func isTrueOrFalse(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        switch text.count {
        case 6: return text[1] == UInt8(ascii: "t") && text[2] == UInt8(ascii: "r") && text[3] == UInt8(ascii: "u")
            && text[4] == UInt8(ascii: "e")
        case 7: return text[1] == UInt8(ascii: "f") && text[2] == UInt8(ascii: "a") && text[3] == UInt8(ascii: "l")
            && text[4] == UInt8(ascii: "s") && text[5] == UInt8(ascii: "e")
        default: return false
        }
    }

    static func checkFlexibleBool(_ claims: JSONObject, _ key: JSONKey) throws(TokenError) {
        // Absent, a boolean, or "true" or "false" written without escapes: answered in place from the member
        // table. Anything else (an escaped spelling included) is judged on the value below.
        let plain = claims.withRawValue(key, isFlexibleBool)
        if plain ?? true { return }
        if let value = claims[key], AppleClaims.flexibleBool(value) == nil {
            let name = key.name
            throw TokenError(.invalidClaim, claim: name,
                             "the \"\(name)\" claim must be true, false, \"true\" or \"false\", not \(Quoted.value(value))")
        }
    }
}
