/// The claims of a Sign in with Apple identity token.
public struct AppleClaims: Sendable {
    /// All the token's claims.
    public let claims: Claims

    /// Apple's view of `claims`.
    public init(_ claims: Claims) { self.claims = claims }

    /// The user's stable, team-scoped identifier (`sub`).
    public var userID: String? { claims.subject }
    /// The user's email address, possibly a private relay address (see ``isPrivateEmail``).
    public var email: String? { claims.email }
    /// Booleans or, in older tokens, the strings `"true"` / `"false"`.
    public var emailVerified: Bool? { claims["email_verified"].flatMap(AppleClaims.flexibleBool) }
    /// Whether ``email`` is a private relay address.
    public var isPrivateEmail: Bool? { claims["is_private_email"].flatMap(AppleClaims.flexibleBool) }
    /// Whether the device supports nonces (when false, the token may lack `nonce`).
    public var nonceSupported: Bool? { claims["nonce_supported"].flatMap(AppleClaims.flexibleBool) }
    /// Apple's judgement of whether the user is a real person (`real_user_status`).
    public var realUserStatus: RealUserStatus? { claims.int("real_user_status").flatMap { RealUserStatus(rawValue: Int($0)) } }
    /// The user's previous `sub` when the app was transferred to another team.
    public var transferSubject: String? { claims.string("transfer_sub") }
    /// The `nonce` claim as the token carries it.
    public var nonce: String? { claims.nonce }
    /// When the user authenticated (`auth_time`), in Unix seconds.
    public var authTime: Double? { claims.authTime }

    /// Apple's anti-fraud signal.
    public enum RealUserStatus: Int, Sendable {
        /// The platform cannot tell (older systems, the web).
        case unsupported = 0
        /// Apple could not decide.
        case unknown = 1
        /// Very likely a real person.
        case likelyReal = 2
    }

    /// ``flexibleBool(_:)`` of the member of `claims` named `key`, read in place (no ``JSONValue``); nil when there
    /// is none.
    package static func flexibleBool(_ claims: JSONObject, _ key: JSONKey) -> Bool? {
        switch claims.kind(of: key) {
        case .true?: return true
        case .false?: return false
        case .string?:
            return claims.withString(key) { text -> Bool? in
                if text.elementsEqual("true".utf8) { return true }
                if text.elementsEqual("false".utf8) { return false }
                return nil
            } ?? nil
        default: return nil
        }
    }

    /// `true`, `false`, `"true"` or `"false"` as a boolean; nil for anything else.
    static func flexibleBool(_ value: JSONValue) -> Bool? {
        switch value.kind {
        case .true: return true
        case .false: return false
        case .string:
            if value.stringEquals("true") { return true }
            if value.stringEquals("false") { return false }
            return nil
        default: return nil
        }
    }
}
