import IDTokenKit

extension OutputFormat {
    /// The line a pipe writes for a blank input line (DESIGN §12: one line out per line in): `malformed`, as a
    /// line that holds no token is.
    func renderBlank(line: Int, at: Double, into out: inout [UInt8]) {
        let result = AuditResult(line: line, id: nil, error: TokenError(.malformed, "line \(line) is blank: no token"),
                                 claims: .none, at: at, signatureVerified: false, profile: nil)
        render(result, into: &out)
    }
}
