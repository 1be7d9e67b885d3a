/// The claim names the profiles read from every token, each hashed once for the life of the process (see
/// ``JSONKey``), so that checking a token's claims never hashes a name or goes through `String`.
enum ClaimKey {
    static let iss = JSONKey("iss")
    static let aud = JSONKey("aud")
    static let sub = JSONKey("sub")
    static let exp = JSONKey("exp")
    static let nbf = JSONKey("nbf")
    static let iat = JSONKey("iat")
    static let authTime = JSONKey("auth_time")
    static let nonce = JSONKey("nonce")
    static let email = JSONKey("email")
    static let firebase = JSONKey("firebase")
    static let realUserStatus = JSONKey("real_user_status")
    /// Sign in with Apple's claims that are booleans or the strings "true" / "false".
    static let emailVerified = JSONKey("email_verified")
    static let isPrivateEmail = JSONKey("is_private_email")
    static let nonceSupported = JSONKey("nonce_supported")
    /// The members of Firebase's `firebase` claim that must be strings when present.
    static let signInSecondFactor = JSONKey("sign_in_second_factor")
    static let signInProvider = JSONKey("sign_in_provider")
    static let tenant = JSONKey("tenant")
    static let identities = JSONKey("identities")
}
