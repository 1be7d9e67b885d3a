/// The time checks of DESIGN §2, with the leeway applied to each:
///
/// | claim | rejected when |
/// |---|---|
/// | `exp` (always required) | `now >= exp + leeway` → `expired` |
/// | `nbf` (optional) | `now < nbf - leeway` → `not_yet_valid` |
/// | `iat`, `auth_time` | `iat > now + leeway` → `issued_in_future` |
///
/// Which of `iat` and `auth_time` must be present depends on the provider. Each claim is type-checked as a
/// NumericDate before its rule is applied, in the order `exp`, `nbf`, `iat`, `auth_time`.
public struct TimeRules: Sendable, Equatable {
    public var requiresIssuedAt: Bool
    public var requiresAuthTime: Bool

    public init(requiresIssuedAt: Bool, requiresAuthTime: Bool = false) {
        self.requiresIssuedAt = requiresIssuedAt
        self.requiresAuthTime = requiresAuthTime
    }

    /// Applies the rules at `now` (Unix seconds). Returns `exp`, which the replay cache needs.
    func check(_ claims: JSONObject, now: Double, leeway: Double, tokenName: String) throws(TokenError) -> Double {
        let exp = try NumericDate.read(claims, ClaimKey.exp, required: true)!
        if now >= exp + leeway {
            throw TokenError(.expired, claim: "exp",
                             "the \(tokenName) expired at \(UnixTime.describe(exp)); the time of verification \(UnixTime.describe(now)) is past it by more than the \(Int(leeway)) s leeway. Get a fresh token from the client and verify that one")
        }
        if let nbf = try NumericDate.read(claims, ClaimKey.nbf, required: false), now < nbf - leeway {
            throw TokenError(.notYetValid, claim: "nbf",
                             "the \(tokenName) is not valid before \(UnixTime.describe(nbf)); the time of verification \(UnixTime.describe(now)) is earlier by more than the \(Int(leeway)) s leeway. Check this machine's clock")
        }
        if let iat = try NumericDate.read(claims, ClaimKey.iat, required: requiresIssuedAt), iat > now + leeway {
            throw TokenError(.issuedInFuture, claim: "iat",
                             "the \(tokenName) claims to be issued at \(UnixTime.describe(iat)), later than the time of verification \(UnixTime.describe(now)) plus the \(Int(leeway)) s leeway. Check this machine's clock")
        }
        if let authTime = try NumericDate.read(claims, ClaimKey.authTime, required: requiresAuthTime), authTime > now + leeway {
            throw TokenError(.issuedInFuture, claim: "auth_time",
                             "the \(tokenName) says the user signed in at \(UnixTime.describe(authTime)), later than the time of verification \(UnixTime.describe(now)) plus the \(Int(leeway)) s leeway. Check this machine's clock")
        }
        return exp
    }
}
