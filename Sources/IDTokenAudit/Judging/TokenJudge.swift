import IDTokenKit

/// What an audit asks of a verifier: judge one token at one time. ``ProfileJudge`` answers with IDTokenKit's
/// verifier and one or more provider profiles; other judges can be plugged in (a benchmark, a test).
///
/// A judge is called from many threads at once and must not depend on earlier calls: the audit may answer a
/// repeated token from its cache (see ``Judgement/timeThresholds``).
public protocol TokenJudge: Sendable {
    /// Judges `token` as of `at` (Unix seconds); `nonce` is the raw nonce the record carried, if any.
    func judge(_ token: String, at: Double, nonce: String?) -> Judgement
}

/// A judge's answer for one token.
public struct Judgement: Sendable {
    /// nil when the token is valid.
    public var error: TokenError?
    /// Whether the signature was checked and verified (true for valid tokens and for those refused by a claim
    /// rule after the signature: `expired`, `wrong_audience`…). Key usage is counted only for these.
    public var signatureVerified: Bool
    /// The protected header, when it could be read.
    public var header: JSONObject? {
        get { headerObject ?? splitHeader?.object }
        set {
            headerObject = newValue
            splitHeader = nil
        }
    }
    /// The header as a judge read it: as a JSON object, or as the verifier split it (indexed as an object only
    /// when ``header`` is asked for: the audit reads the `kid` alone, in place).
    private var headerObject: JSONObject?
    private var splitHeader: JOSEHeader?
    /// The claims: verified when ``signatureVerified``, otherwise what the token says (unverified), for reports.
    public var claims: JSONObject?
    /// The leeway (seconds) the deciding profile applied to time checks.
    public var leeway: Double
    /// The profile that judged the token (e.g. `firebase`), when one did.
    public var profile: String?

    public init(error: TokenError?, signatureVerified: Bool, header: JSONObject?, claims: JSONObject?,
                leeway: Double, profile: String?) {
        self.error = error
        self.signatureVerified = signatureVerified
        self.headerObject = header
        self.claims = claims
        self.leeway = leeway
        self.profile = profile
    }

    /// A judgement with the header as the verifier split it.
    public init(error: TokenError?, signatureVerified: Bool, splitHeader: JOSEHeader?, claims: JSONObject?,
                leeway: Double, profile: String?) {
        self.error = error
        self.signatureVerified = signatureVerified
        self.splitHeader = splitHeader
        self.claims = claims
        self.leeway = leeway
        self.profile = profile
    }

    /// Replaces the header with the one the verifier split.
    mutating func setHeader(_ header: JOSEHeader) {
        headerObject = nil
        splitHeader = header
    }

    /// Calls `body` with the header's `kid` (unescaped UTF-8), or nil when there is no header, no `kid`, or a
    /// `kid` that is not a string.
    func withKid<R>(_ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        if let splitHeader { return splitHeader.withKid(body) }
        if let headerObject, let result = headerObject.withString(ReportedClaims.Keys.kid, { body($0) }) { return result }
        return body(nil)
    }

    public var isValid: Bool { error == nil }

    /// The instants at which this token's verdict can change as the time of judgement moves: `exp` + leeway,
    /// and `nbf`, `iat`, `auth_time` − leeway (DESIGN §2). Between two neighbouring thresholds the verdict is
    /// the same, which is what lets the audit reuse it for a repeated token judged at another time.
    public var timeThresholds: [Double] {
        var out: [Double] = []
        forEachThreshold { out.append($0) }
        return out
    }

    /// The interval of times `[from, until)` around `at` that no threshold splits: the times for which this
    /// verdict holds. Worked out without building the list of thresholds.
    public func interval(around at: Double) -> (from: Double, until: Double) {
        interval(around: at, reported: nil)
    }

    /// ``interval(around:)`` with `exp` and `iat` as ``ReportedClaims`` read them from these claims, so that they
    /// are not looked up again.
    func interval(around at: Double, reported: ReportedClaims?) -> (from: Double, until: Double) {
        var from = -Double.infinity, until = Double.infinity
        forEachThreshold(reported: reported) { t in
            if t <= at { from = max(from, t) } else { until = min(until, t) }
        }
        return (from, until)
    }

    private func forEachThreshold(reported: ReportedClaims? = nil, _ body: (Double) -> Void) {
        guard let claims else { return }
        func threshold(_ seconds: Double?, _ sign: Double) {
            if let seconds, seconds.isFinite { body(seconds + sign * leeway) }
        }
        func threshold(_ key: JSONKey, _ sign: Double) {
            threshold(ReportedClaims.seconds(claims.number(key)), sign)
        }
        if let reported { threshold(reported.expires, 1) } else { threshold(ReportedClaims.Keys.exp, 1) }
        threshold(ReportedClaims.Keys.nbf, -1)
        if let reported { threshold(reported.issuedAt, -1) } else { threshold(ReportedClaims.Keys.iat, -1) }
        threshold(ReportedClaims.Keys.authTime, -1)
    }
}

extension TokenError.Code {
    /// Codes that a verifier raises only after the signature verified (DESIGN §2 steps 5–6).
    public var isAfterSignature: Bool {
        switch self {
        case .expired, .notYetValid, .issuedInFuture, .wrongIssuer, .wrongAudience, .invalidClaim, .nonceMismatch,
             .replayed, .tenantMismatch, .providerNotAllowed, .revoked:
            return true
        default:
            return false
        }
    }
}
