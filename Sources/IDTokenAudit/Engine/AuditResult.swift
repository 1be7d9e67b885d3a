import IDTokenKit

/// The verdict on one record, with the fields an audit reports for it.
///
/// The judgement itself (the error, the reported claims, the profile…) is a ``VerdictCache/Verdict`` that the result
/// refers to: the verdict cache and every record of the same token judged in the same interval share one, so that a
/// result costs the record's own line, id and time and one reference, not a copy of each field.
package struct AuditResult: Sendable {
    /// 1-based line number in the input.
    package let line: Int
    package let id: RecordID?
    /// The time the token was judged at (Unix seconds).
    package let at: Double
    /// The judgement, shared.
    let verdict: VerdictCache.Verdict
    /// For a replayed token: the line where it was first accepted, when known.
    package private(set) var firstSeenLine: Int?
    /// The replay stage's refusal of a token accepted on an earlier line, which stands in for the verdict's error.
    private var replayed: TokenError?

    /// A result judged by `verdict`.
    init(line: Int, id: RecordID?, at: Double, verdict: VerdictCache.Verdict) {
        self.line = line
        self.id = id
        self.at = at
        self.verdict = verdict
    }

    /// A result with a verdict of its own (a line without a readable token, a test).
    package init(line: Int, id: RecordID?, error: TokenError?, claims: ReportedClaims, at: Double,
                 signatureVerified: Bool, profile: String?, replayEntry: ReplayEntry? = nil) {
        self.init(line: line, id: id, at: at,
                  verdict: VerdictCache.Verdict(error: error, claims: claims, signatureVerified: signatureVerified,
                                                profile: profile, replayEntry: replayEntry))
    }

    /// nil when the token is valid.
    package var error: TokenError? { replayed ?? verdict.error }
    /// Read in place in the verdict (`r.claims.issuer` copies the issuer, not the claims).
    package var claims: ReportedClaims { _read { yield verdict.claims } }
    /// Whether the token's signature verified (see ``ProfileVerification/signatureVerified``).
    package var signatureVerified: Bool { verdict.signatureVerified }
    /// The profile that judged the token, when one did.
    package var profile: String? { verdict.profile }
    /// What the replay stage keys on (issuer and SHA-256 of the signed `header.payload`), for valid tokens.
    var replayEntry: ReplayEntry? { verdict.replayEntry }

    package var isValid: Bool { replayed == nil && verdict.error == nil }

    /// The token was accepted before, on line `first` when known: the result is `replayed`.
    mutating func markReplayed(firstSeenLine first: Int?, _ error: TokenError) {
        firstSeenLine = first
        replayed = error
    }
}
