/// The claim names the profiles read from every token, each hashed once for the life of the process (see
/// ``JSONKey``), so that checking a token's claims never hashes a name or goes through `String`. The audit's
/// reports read theirs from here too (`package`), so that each name is one constant.
package enum ClaimKey {
    /// The header's key ID, which reports show beside the claims.
    package static let kid = JSONKey("kid")
    package static let iss = JSONKey("iss")
    package static let aud = JSONKey("aud")
    package static let sub = JSONKey("sub")
    package static let exp = JSONKey("exp")
    package static let nbf = JSONKey("nbf")
    package static let iat = JSONKey("iat")
    package static let authTime = JSONKey("auth_time")
    package static let nonce = JSONKey("nonce")
    package static let email = JSONKey("email")
    package static let firebase = JSONKey("firebase")
    package static let realUserStatus = JSONKey("real_user_status")
    /// Sign in with Apple's claims that are booleans or the strings "true" / "false".
    package static let emailVerified = JSONKey("email_verified")
    package static let isPrivateEmail = JSONKey("is_private_email")
    package static let nonceSupported = JSONKey("nonce_supported")
    /// The members of Firebase's `firebase` claim that must be strings when present.
    package static let signInSecondFactor = JSONKey("sign_in_second_factor")
    package static let signInProvider = JSONKey("sign_in_provider")
    package static let tenant = JSONKey("tenant")
    package static let identities = JSONKey("identities")
    /// Sign in with Apple's notifications: what tells one from an identity token of the same issuer.
    package static let events = JSONKey("events")
}
