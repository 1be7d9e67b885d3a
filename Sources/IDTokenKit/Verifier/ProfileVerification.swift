/// The one value a token's way through a ``MultiProfileVerifier`` ends in, whatever door it came through:
/// `idtoken verify`, an audit's record, an `idtoken serve` request, a Vapor or Hummingbird route. Each door maps
/// it to its own output (an exit status, a verdict line, an HTTP answer) and decides nothing itself.
///
/// ```swift
/// let outcome = await verifier.verify(token, now: .now)
/// if let token = outcome.verifiedToken {
///     print(outcome.profile!, token.subject)
/// } else {
///     print(outcome.error!.code, outcome.signatureVerified)
/// }
/// ```
///
/// It says which profile decided, the verified token or the refusal, how far a refused token got (whether its
/// signature verified), its header and what its payload says (verified when the signature verified, otherwise
/// only what the token claims about itself, for reports: nothing in it may be trusted then), the time window the
/// deciding profile's leeway gives, and where the payload lies in the token.
public struct ProfileVerification: Sendable {
    /// nil when the token was accepted.
    public var error: TokenError?
    /// The verified token, when accepted.
    public var verifiedToken: VerifiedToken?
    /// Whether the signature was checked and verified (true for accepted tokens and for those refused by a claim
    /// rule after the signature: `expired`, `wrong_audience`…).
    public var signatureVerified: Bool
    /// The name of the profile that decided (`firebase`, or the name it was given), nil when none could: a token
    /// that is not a compact JWS, or one whose issuer no profile accepts.
    public var profile: String?
    /// The leeway (seconds) the deciding profile applied to time checks; 0 when no profile decided.
    public var leeway: Double
    /// The payload segment's bytes in the token (the signed `header.payload` ends where it ends), when the token
    /// could be split.
    public var payloadRange: Range<Int>?
    /// The claims: verified when ``signatureVerified``, otherwise what the token says, for reports.
    public var claims: JSONObject?
    /// The protected header, as the verifier split it, or as a report read it from a token that could not be split.
    private var splitHeader: JOSEHeader?
    private var headerObject: JSONObject?
    /// The time window the verifier's time check computed, when it got that far.
    private var window: TimeWindow?

    /// An outcome from its parts, the header as the verifier split it.
    package init(error: TokenError?, verifiedToken: VerifiedToken? = nil, signatureVerified: Bool, splitHeader: JOSEHeader?,
                 claims: JSONObject?, leeway: Double, profile: String?, payloadRange: Range<Int>? = nil, window: TimeWindow? = nil) {
        self.error = error
        self.verifiedToken = verifiedToken
        self.signatureVerified = signatureVerified
        self.splitHeader = splitHeader
        self.claims = claims
        self.leeway = leeway
        self.profile = profile
        self.payloadRange = payloadRange
        self.window = window
    }

    /// The outcome of a token accepted by the profile `profile`: its header, claims and payload range are the
    /// verified token's, and `window` the time window the verifier's time check computed (nil for a cache's hit,
    /// whose window the claims give). Assigned in place, the token moved in: a verified-token cache's hit makes one
    /// on every request, and every token a profile accepts one more.
    package init(accepted verified: consuming VerifiedToken, leeway: Double, profile: String, window: TimeWindow? = nil) {
        self.window = window
        error = nil
        signatureVerified = true
        splitHeader = verified.header
        claims = verified.claims.object
        payloadRange = verified.payloadRange
        self.leeway = leeway
        self.profile = profile
        verifiedToken = consume verified
    }

    /// An outcome with the header as a JSON object (a token that could not be split, read for its report).
    package init(error: TokenError?, signatureVerified: Bool, header: JSONObject?, claims: JSONObject?, leeway: Double,
                 profile: String?) {
        self.init(error: error, signatureVerified: signatureVerified, splitHeader: nil, claims: claims, leeway: leeway,
                  profile: profile)
        self.headerObject = header
    }

    /// Whether the token was accepted.
    public var isValid: Bool { error == nil }

    /// The verified token, or the refusal thrown.
    public func get() throws(TokenError) -> VerifiedToken {
        if let verifiedToken { return verifiedToken }
        throw error ?? TokenError(.malformed, "no verdict")
    }

    /// The protected header, when it could be read.
    public var header: JSONObject? { headerObject ?? splitHeader?.object }

    /// Calls `body` with the header's `kid` (unescaped UTF-8, read in place), or nil when there is no header, no
    /// `kid`, or a `kid` that is not a string.
    package func withKid<R>(_ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        if let splitHeader { return splitHeader.withKid(body) }
        return withObjectKid(body)
    }

    /// ``withKid(_:)`` for a header read as an object (a token that could not be split). A function of its own: the
    /// `R?` it needs is a generic type whose metadata is looked up at run time, which a split token's way would
    /// otherwise pay for on every call.
    @inline(never)
    private func withObjectKid<R>(_ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        if let headerObject, let result = headerObject.withString(ClaimKey.kid, { body($0) }) { return result }
        return body(nil)
    }

    /// The token's time window (DESIGN §2) under the deciding profile's leeway: the one the verifier's time check
    /// computed, or, for a token refused before that check, the one its claims give.
    public var timeWindow: TimeWindow {
        if let window { return window }
        return claims.map { TimeWindow(claims: $0, leeway: leeway) } ?? TimeWindow(leeway: leeway)
    }

    /// The instants at which this verdict can change as the time of judgement moves (``TimeWindow/thresholds``):
    /// between two neighbouring thresholds a repeated token gets the same verdict.
    public var timeThresholds: [Double] { timeWindow.thresholds }

    /// The times `[from, until)` around `at` that no threshold splits: the times for which this verdict holds.
    public func interval(around at: Double) -> (from: Double, until: Double) { timeWindow.interval(around: at) }

    /// The replay key (DESIGN §6, ``ReplayEntry/init(signingInput:issuer:exp:leeway:)``) of the accepted `token`
    /// this outcome is for; nil when it was refused.
    public func replayEntry(of token: String) -> ReplayEntry? {
        replayEntry(ofBytes: token.utf8)
    }

    /// ``replayEntry(of:)`` for the token's bytes, wherever the caller holds them.
    package func replayEntry<Bytes: Collection<UInt8>>(ofBytes token: Bytes) -> ReplayEntry? {
        guard let verifiedToken, let payloadRange else { return nil }
        return ReplayEntry(signingInputBytes: token.prefix(payloadRange.upperBound), issuer: verifiedToken.issuer,
                           exp: window?.exp ?? verifiedToken.claims.expiresAt ?? 0, leeway: leeway)
    }

    /// The payload segment of `token` as it carries it (base64url), when the token could be split.
    public func payloadSegment(of token: String) -> Substring? {
        payloadRange.map { Self.segment(of: token, $0) }
    }

    /// The bytes `range` of `token` (a segment's ``payloadRange``, ``VerifiedToken/payloadRange``).
    package static func segment(of token: String, _ range: Range<Int>) -> Substring {
        let utf8 = token.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        return token[start..<utf8.index(start, offsetBy: range.count)]
    }
}
