/// The time checks of DESIGN §2, with the leeway applied to each (the bounds are those of ``TimeWindow``):
///
/// | claim | rejected when |
/// |---|---|
/// | `exp` (required but for Apple's server notifications) | `now >= exp + leeway` → `expired` |
/// | `nbf` (optional) | `now < nbf - leeway` → `not_yet_valid` |
/// | `iat`, `auth_time` | `iat > now + leeway` (`now < iat - leeway`) → `issued_in_future` |
///
/// Which of `iat` and `auth_time` must be present depends on the provider. Each claim is type-checked as a
/// NumericDate before its rule is applied, in the order `exp`, `nbf`, `iat`, `auth_time`: a token refused for
/// one claim is refused for it whatever the later claims hold.
public struct TimeRules: Sendable, Equatable {
    /// Whether `iat` must be present.
    public var requiresIssuedAt: Bool
    /// Whether `auth_time` must be present.
    public var requiresAuthTime: Bool
    /// For tokens that may lack `exp` (Apple's server notifications): how long after `iat` such a token is
    /// accepted, as if its `exp` were `iat + lifetimeWithoutExpiry`. Nil: `exp` is required. A token that has no
    /// end would be accepted for ever, and a replay cache could never let it go.
    public var lifetimeWithoutExpiry: Double?

    /// Rules requiring `exp`, and `iat` and `auth_time` as given.
    public init(requiresIssuedAt: Bool, requiresAuthTime: Bool = false) {
        self.requiresIssuedAt = requiresIssuedAt
        self.requiresAuthTime = requiresAuthTime
        self.lifetimeWithoutExpiry = nil
    }

    /// Rules for tokens whose `exp` is optional: `iat` is required, and a token without `exp` expires
    /// `lifetime` seconds after it.
    public init(expiringAfterIssueWhenUnbounded lifetime: Double) {
        self.requiresIssuedAt = true
        self.requiresAuthTime = false
        self.lifetimeWithoutExpiry = lifetime
    }

    /// Applies the rules at `now` (Unix seconds). Returns the token's window, whose ``TimeWindow/expiresAt``
    /// the replay cache needs and which the verified-token cache checks again on a hit.
    func check(_ claims: JSONObject, now: Double, leeway: Double, tokenName: String) throws(TokenError) -> TimeWindow {
        var window = TimeWindow(leeway: leeway)
        // Claim by claim, in the window's order (written out: no array of bounds, and no closure capturing the
        // window, which would box it, on the verification path).
        try apply(.exp, claims, now: now, tokenName: tokenName, to: &window)
        try apply(.nbf, claims, now: now, tokenName: tokenName, to: &window)
        try apply(.iat, claims, now: now, tokenName: tokenName, to: &window)
        try apply(.authTime, claims, now: now, tokenName: tokenName, to: &window)
        if window.exp == nil, let lifetime = lifetimeWithoutExpiry, window.issuedAt.isFinite {
            let issued = window.issuedAt + window.leeway
            window.set(.exp, issued + lifetime)
            if window.refuses(.exp, at: now) {
                let leeway = Int(window.leeway), hours = Int(lifetime / 3600)
                throw TokenError(.expired, claim: "iat",
                                 "the \(tokenName) has no \"exp\" and was issued at \(UnixTime.describe(issued)), more than \(hours) h (plus the \(leeway) s leeway) before the time of verification \(UnixTime.describe(now)); such a token is accepted for \(hours) h after it was issued")
            }
        }
        return window
    }

    /// Reads `bound`'s claim into `window` and refuses the token if the window then refuses it at `now`.
    @inline(__always)
    private func apply(_ bound: TimeWindow.Bound, _ claims: JSONObject, now: Double, tokenName: String,
                       to window: inout TimeWindow) throws(TokenError) {
        guard let seconds = try NumericDate.read(claims, bound.key, required: isRequired(bound)) else { return }
        window.set(bound, seconds)
        if window.refuses(bound, at: now) {
            throw refusal(bound, seconds, now: now, leeway: window.leeway, tokenName: tokenName)
        }
    }

    private func isRequired(_ bound: TimeWindow.Bound) -> Bool {
        switch bound {
        case .exp: return lifetimeWithoutExpiry == nil
        case .nbf: return false
        case .iat: return requiresIssuedAt
        case .authTime: return requiresAuthTime
        }
    }

    private func refusal(_ bound: TimeWindow.Bound, _ seconds: Double, now: Double, leeway: Double, tokenName: String) -> TokenError {
        switch bound {
        case .exp:
            return TokenError(.expired, claim: "exp",
                              "the \(tokenName) expired at \(UnixTime.describe(seconds)); the time of verification \(UnixTime.describe(now)) is past it by more than the \(Int(leeway)) s leeway. Get a fresh token from the client and verify that one")
        case .nbf:
            return TokenError(.notYetValid, claim: "nbf",
                              "the \(tokenName) is not valid before \(UnixTime.describe(seconds)); the time of verification \(UnixTime.describe(now)) is earlier by more than the \(Int(leeway)) s leeway. Check this machine's clock")
        case .iat:
            return TokenError(.issuedInFuture, claim: "iat",
                              "the \(tokenName) claims to be issued at \(UnixTime.describe(seconds)), later than the time of verification \(UnixTime.describe(now)) plus the \(Int(leeway)) s leeway. Check this machine's clock")
        case .authTime:
            return TokenError(.issuedInFuture, claim: "auth_time",
                              "the \(tokenName) says the user signed in at \(UnixTime.describe(seconds)), later than the time of verification \(UnixTime.describe(now)) plus the \(Int(leeway)) s leeway. Check this machine's clock")
        }
    }
}
