import IDTokenKit

/// What an audit asks of a verifier: judge one token at one time. ``ProfileJudge`` answers with IDTokenKit's
/// verifier and one or more provider profiles; other judges can be plugged in (a benchmark, a test).
///
/// A judge is called from many threads at once and must not depend on earlier calls: the audit may answer a
/// repeated token from its cache (see ``Judgement/timeThresholds``).
package protocol TokenJudge: Sendable {
    /// Judges `token` as of `at` (Unix seconds); `nonce` is the raw nonce the record carried, if any.
    func judge(_ token: String, at: Double, nonce: String?) -> Judgement
}

/// A judge's answer for one token.
package struct Judgement: Sendable {
    /// nil when the token is valid.
    package var error: TokenError?
    /// Whether the signature was checked and verified (true for valid tokens and for those refused by a claim
    /// rule after the signature: `expired`, `wrong_audience`…). Key usage is counted only for these.
    package var signatureVerified: Bool
    /// The protected header, when it could be read.
    package var header: JSONObject? {
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
    package var claims: JSONObject?
    /// The leeway (seconds) the deciding profile applied to time checks.
    package var leeway: Double
    /// The profile that judged the token (e.g. `firebase`), when one did.
    package var profile: String?

    package init(error: TokenError?, signatureVerified: Bool, header: JSONObject?, claims: JSONObject?,
                leeway: Double, profile: String?) {
        self.error = error
        self.signatureVerified = signatureVerified
        self.headerObject = header
        self.claims = claims
        self.leeway = leeway
        self.profile = profile
    }

    /// A judgement with the header as the verifier split it.
    package init(error: TokenError?, signatureVerified: Bool, splitHeader: JOSEHeader?, claims: JSONObject?,
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
        if let headerObject, let result = headerObject.withString(ClaimKey.kid, { body($0) }) { return result }
        return body(nil)
    }

    package var isValid: Bool { error == nil }

    /// The token's time window (DESIGN §2) under the deciding profile's leeway, from its claims: the same
    /// ``TimeWindow`` the verifier's time check and the verified-token cache ask.
    package var timeWindow: TimeWindow {
        claims.map { TimeWindow(claims: $0, leeway: leeway) } ?? TimeWindow(leeway: leeway)
    }

    /// The instants at which this token's verdict can change as the time of judgement moves: `exp` + leeway,
    /// and `nbf`, `iat`, `auth_time` − leeway (``TimeWindow/thresholds``). Between two neighbouring thresholds
    /// the verdict is the same, which is what lets the audit reuse it for a repeated token judged at another time.
    package var timeThresholds: [Double] { timeWindow.thresholds }

    /// The interval of times `[from, until)` around `at` that no threshold splits: the times for which this
    /// verdict holds (``TimeWindow/interval(around:)``).
    package func interval(around at: Double) -> (from: Double, until: Double) {
        timeWindow.interval(around: at)
    }
}
