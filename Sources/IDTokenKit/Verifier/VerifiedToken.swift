/// A token that passed every check of its profile. Only ``IDTokenVerifier`` can make one, so holding a
/// `VerifiedToken` means the signature, issuer, audience, times, claims, nonce and replay checks all passed.
public struct VerifiedToken: Sendable {
    /// The profile's provider.
    public let provider: Provider
    /// The algorithm the signature was checked with.
    public let algorithm: JWSAlgorithm
    /// The protected header.
    public let header: JOSEHeader
    /// All the token's claims.
    public let claims: Claims
    /// Where the payload segment lies in the token's UTF-8 bytes (``CompactJWS/payloadRange``).
    public let payloadRange: Range<Int>
    /// Where a service keeps what it derives from this token, when the verified-token cache holds it; nil otherwise.
    package private(set) var memo: VerifiedTokenMemo?

    init(provider: Provider, algorithm: JWSAlgorithm, header: JOSEHeader, claims: JSONObject, payloadRange: Range<Int>) {
        self.provider = provider
        self.algorithm = algorithm
        self.header = header
        self.claims = Claims(claims)
        self.payloadRange = payloadRange
        self.memo = nil
    }

    /// This token with a memo of its own, as the verified-token cache keeps it.
    func memoized() -> VerifiedToken {
        var copy = self
        copy.memo = VerifiedTokenMemo()
        return copy
    }

    /// The `kid` of the key that verified the signature, when the header named one.
    public var kid: String? { header.kid }
    /// The user: `sub`, which every profile requires to be a non-empty string — for Apple's server notifications,
    /// which have none, the event's `sub`.
    public var subject: String {
        if provider == .appleNotification { return appleNotification?.subject ?? "" }
        return claims.subject ?? ""
    }
    /// The issuer (`iss`).
    public var issuer: String { claims.issuer ?? "" }
    /// `exp`, seconds since 1970.
    public var expiresAt: Double { claims.expiresAt ?? 0 }

    /// Firebase-specific claims (meaningful for ``Provider/firebase`` and ``Provider/firebaseSessionCookie``).
    public var firebase: FirebaseClaims { FirebaseClaims(claims) }
    /// Sign in with Apple claims.
    public var apple: AppleClaims { AppleClaims(claims) }
    /// The event of a Sign in with Apple server notification (``Provider/appleNotification``), which its profile
    /// has already read once to accept it; nil for other tokens.
    public var appleNotification: AppleNotification? {
        guard provider == .appleNotification, let events = claims["events"] else { return nil }
        return try? AppleNotification.parse(events)
    }
    /// Facebook Limited Login claims.
    public var facebook: FacebookClaims { FacebookClaims(claims) }
}
