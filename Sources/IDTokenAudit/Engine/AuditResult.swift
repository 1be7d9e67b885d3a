import IDTokenKit

/// The verdict on one record, with the fields an audit reports for it.
public struct AuditResult: Sendable {
    /// 1-based line number in the input.
    public let line: Int
    public let id: RecordID?
    /// nil when the token is valid.
    public internal(set) var error: TokenError?
    public let claims: ReportedClaims
    /// The time the token was judged at (Unix seconds).
    public let at: Double
    /// Whether the token's signature verified (see ``Judgement/signatureVerified``).
    public let signatureVerified: Bool
    /// The profile that judged the token, when one did.
    public let profile: String?
    /// For a replayed token: the line where it was first accepted, when known.
    public internal(set) var firstSeenLine: Int?
    /// What the replay stage keys on (issuer and SHA-256 of the signed `header.payload`), for valid tokens.
    let replayEntry: ReplayEntry?

    public init(line: Int, id: RecordID?, error: TokenError?, claims: ReportedClaims, at: Double,
                signatureVerified: Bool, profile: String?, replayEntry: ReplayEntry? = nil) {
        self.line = line
        self.id = id
        self.error = error
        self.claims = claims
        self.at = at
        self.signatureVerified = signatureVerified
        self.profile = profile
        self.replayEntry = replayEntry
    }

    public var isValid: Bool { error == nil }
}
