/// The claims of a Firebase ID token or session cookie.
///
/// ```swift
/// let token = try await verifier.verify(idToken, now: .now)
/// token.firebase.uid                    // "Xmz6vTCbnZbrC7lqXiXTAa7FpeT2"
/// token.firebase.signInProvider         // "apple.com"
/// token.firebase.identities["email"]    // ["user@example.com"]
/// token.firebase.customClaim("role")?.string
/// ```
public struct FirebaseClaims: Sendable {
    /// All the token's claims.
    public let claims: Claims

    /// Firebase's view of `claims`.
    public init(_ claims: Claims) { self.claims = claims }

    /// The Firebase user ID (`sub`).
    public var uid: String? { claims.subject }
    /// The `firebase` object.
    public var firebase: JSONObject? { claims["firebase"]?.object }
    /// How the user signed in: `password`, `google.com`, `apple.com`, `facebook.com`, `github.com`, `phone`,
    /// `anonymous`, `custom`…
    public var signInProvider: String? { firebase?["sign_in_provider"]?.string }
    /// The second factor used, when the sign-in was multi-factor (`phone`, `totp`).
    public var signInSecondFactor: String? { firebase?["sign_in_second_factor"]?.string }
    /// The ID of the second factor used.
    public var secondFactorIdentifier: String? { firebase?["second_factor_identifier"]?.string }
    /// The Identity Platform tenant, if any.
    public var tenant: String? { firebase?["tenant"]?.string }
    /// Provider → the user's identifiers with it (`"google.com": ["1010…"]`, `"email": ["a@b.com"]`).
    /// Entries that are not arrays of strings are left out.
    public var identities: [String: [String]] {
        guard let object = firebase?["identities"]?.object else { return [:] }
        var out: [String: [String]] = [:]
        for (provider, value) in object.entries {
            if let ids = Claims.strings(value) { out[provider] = ids }
        }
        return out
    }
    /// The user's email address.
    public var email: String? { claims.email }
    /// Whether Firebase verified the email address.
    public var emailVerified: Bool? { claims["email_verified"]?.bool }
    /// The user's phone number, for phone sign-in.
    public var phoneNumber: String? { claims.string("phone_number") }
    /// The user's display name: chosen by the user, so treat it as untrusted text.
    public var name: String? { claims.name }
    /// The URL of the user's photo.
    public var picture: String? { claims.picture }
    /// When the user signed in (`auth_time`).
    public var authTime: Double? { claims.authTime }

    /// The claims Firebase itself sets; everything else in the payload is a custom claim.
    public static let reservedClaims: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "iat", "iss", "jti", "nbf",
        "nonce", "sub", "firebase", "user_id", "email", "email_verified", "phone_number", "name", "picture",
    ]

    /// A custom claim set with `setCustomUserClaims`, by name (nested values stay JSON).
    public func customClaim(_ name: String) -> JSONValue? {
        FirebaseClaims.reservedClaims.contains(name) ? nil : claims[name]
    }

    /// The names of every custom claim.
    public var customClaimNames: [String] { claims.object.keys.filter { !FirebaseClaims.reservedClaims.contains($0) } }
}
