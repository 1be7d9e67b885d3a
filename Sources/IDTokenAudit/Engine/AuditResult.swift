import IDTokenKit

/// The verdict on one record, with the fields an audit reports for it.
package struct AuditResult: Sendable {
    /// 1-based line number in the input.
    package let line: Int
    package let id: RecordID?
    /// nil when the token is valid.
    package internal(set) var error: TokenError?
    package let claims: ReportedClaims
    /// The time the token was judged at (Unix seconds).
    package let at: Double
    /// Whether the token's signature verified (see ``ProfileVerification/signatureVerified``).
    package let signatureVerified: Bool
    /// The profile that judged the token, when one did.
    package let profile: String?
    /// For a replayed token: the line where it was first accepted, when known.
    package internal(set) var firstSeenLine: Int?
    /// What the replay stage keys on (issuer and SHA-256 of the signed `header.payload`), for valid tokens.
    let replayEntry: ReplayEntry?

    package init(line: Int, id: RecordID?, error: TokenError?, claims: ReportedClaims, at: Double,
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

    package var isValid: Bool { error == nil }
}
