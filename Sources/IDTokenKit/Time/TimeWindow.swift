/// The times at which a token's time checks (DESIGN §2) change their answer, with the leeway applied:
///
/// | bound | from the claim | the token is refused when |
/// |---|---|---|
/// | ``expiresAt`` | `exp + leeway` | `now >= expiresAt` → `expired` |
/// | ``notBefore`` | `nbf − leeway` | `now < notBefore` → `not_yet_valid` |
/// | ``issuedAt`` | `iat − leeway` | `now < issuedAt` → `issued_in_future` |
/// | ``authenticatedAt`` | `auth_time − leeway` | `now < authenticatedAt` → `issued_in_future` |
///
/// This is the one place where the leeway is added to a claim and where a time is compared with a bound. The
/// verifier's time check (``TimeRules``), the verified-token cache's re-check of a token it holds and an
/// audit's interval of times over which one verdict holds all ask a window, so that a cached or audited
/// verdict is the one a fresh verification would give, to the bit.
///
/// A bound whose claim is absent (or not a valid NumericDate) is infinite: it never refuses.
public struct TimeWindow: Sendable, Equatable {
    /// The time claims, in the order the verifier checks them.
    public enum Bound: Int, Sendable, CaseIterable {
        /// `exp`: ``TimeWindow/expiresAt``.
        case exp
        /// `nbf`: ``TimeWindow/notBefore``.
        case nbf
        /// `iat`: ``TimeWindow/issuedAt``.
        case iat
        /// `auth_time`: ``TimeWindow/authenticatedAt``.
        case authTime

        /// The claim's name in the token.
        public var claim: String {
            switch self {
            case .exp: return "exp"
            case .nbf: return "nbf"
            case .iat: return "iat"
            case .authTime: return "auth_time"
            }
        }

        var key: JSONKey {
            switch self {
            case .exp: return ClaimKey.exp
            case .nbf: return ClaimKey.nbf
            case .iat: return ClaimKey.iat
            case .authTime: return ClaimKey.authTime
            }
        }

        /// `exp` is an upper bound (the token is refused from it on); the others are lower bounds.
        var isUpper: Bool { self == .exp }
    }

    /// The leeway, in seconds, applied to every bound.
    public let leeway: Double
    /// The `exp` claim itself, when known: what a replay cache's entry is kept by (``ReplayEntry``).
    public private(set) var exp: Double?
    /// `exp + leeway`: refused when `now >= expiresAt`; +∞ when `exp` is unknown.
    public private(set) var expiresAt: Double = .infinity
    /// `nbf − leeway`: refused when `now < notBefore`; −∞ without `nbf`.
    public private(set) var notBefore: Double = -.infinity
    /// `iat − leeway`: refused when `now < issuedAt`; −∞ without `iat`.
    public private(set) var issuedAt: Double = -.infinity
    /// `auth_time − leeway`: refused when `now < authenticatedAt`; −∞ without `auth_time`.
    public private(set) var authenticatedAt: Double = -.infinity

    /// A window that refuses nothing yet; ``set(_:_:)`` adds each claim.
    public init(leeway: Double) { self.leeway = leeway }

    /// The window of `claims`: each time claim that is a valid NumericDate bounds it; the others (absent, or not
    /// a date) leave it open. Used to explain or re-time a verdict already given: a claim that is not a date
    /// makes the verifier refuse the token whatever the time, so it moves no threshold.
    public init(claims: JSONObject, leeway: Double) {
        self.init(leeway: leeway)
        // Written out, as on the verifier's path: an audit makes one window per record.
        if let seconds = NumericDate.valid(claims, ClaimKey.exp) { set(.exp, seconds) }
        if let seconds = NumericDate.valid(claims, ClaimKey.nbf) { set(.nbf, seconds) }
        if let seconds = NumericDate.valid(claims, ClaimKey.iat) { set(.iat, seconds) }
        if let seconds = NumericDate.valid(claims, ClaimKey.authTime) { set(.authTime, seconds) }
    }

    /// Sets `bound` from its claim's value in seconds (the leeway is applied here).
    public mutating func set(_ bound: Bound, _ seconds: Double) {
        switch bound {
        case .exp:
            exp = seconds
            expiresAt = seconds + leeway
        case .nbf: notBefore = seconds - leeway
        case .iat: issuedAt = seconds - leeway
        case .authTime: authenticatedAt = seconds - leeway
        }
    }

    /// The bound's value (with the leeway applied).
    public subscript(bound: Bound) -> Double {
        switch bound {
        case .exp: return expiresAt
        case .nbf: return notBefore
        case .iat: return issuedAt
        case .authTime: return authenticatedAt
        }
    }

    /// Whether `bound` refuses the token at `now`.
    @inline(__always)
    public func refuses(_ bound: Bound, at now: Double) -> Bool {
        bound.isUpper ? now >= self[bound] : now < self[bound]
    }

    /// The first bound, in the verifier's order, that refuses the token at `now`; nil when the times pass.
    @inline(__always)
    public func refusal(at now: Double) -> Bound? {
        if now >= expiresAt { return .exp }
        if now < notBefore { return .nbf }
        if now < issuedAt { return .iat }
        if now < authenticatedAt { return .authTime }
        return nil
    }

    /// Whether every time check passes at `now`.
    @inline(__always)
    public func contains(_ now: Double) -> Bool { refusal(at: now) == nil }

    /// The finite bounds: the instants at which the verdict can change as the time of verification moves.
    /// Between two neighbouring thresholds (a half-open interval `[t₁, t₂)`) every time check answers the same.
    public var thresholds: [Double] {
        [expiresAt, notBefore, issuedAt, authenticatedAt].filter(\.isFinite)
    }

    /// The interval of times `[from, until)` around `at` that no threshold splits: the times at which every
    /// time check answers as it does at `at`.
    public func interval(around at: Double) -> (from: Double, until: Double) {
        var from = -Double.infinity, until = Double.infinity
        func split(_ t: Double) {
            guard t.isFinite else { return }
            if t <= at { from = max(from, t) } else { until = min(until, t) }
        }
        split(expiresAt)
        split(notBefore)
        split(issuedAt)
        split(authenticatedAt)
        return (from, until)
    }
}
