/// `iss` must be a string equal to one of the pinned issuers.
public struct IssuerRule: Sendable, Equatable {
    /// The issuers accepted, compared byte for byte.
    public var accepted: [String]

    /// A rule accepting the issuers `accepted`.
    public init(_ accepted: [String]) { self.accepted = accepted }

    func check(_ claims: JSONObject, profile: Profile) throws(TokenError) {
        // The usual case, an accepted issuer, is answered in place; the rest reads the claim again to explain.
        if claims.string(ClaimKey.iss, isOneOf: accepted) == true { return }
        guard let iss = claims[ClaimKey.iss] else {
            throw TokenError(.invalidClaim, claim: "iss", "the \(profile.tokenName) has no \"iss\" (issuer) claim")
        }
        guard iss.kind == .string else {
            throw TokenError(.invalidClaim, claim: "iss", "the \"iss\" (issuer) claim must be a string, not a \(iss.kind)")
        }
        for issuer in accepted where iss.stringEquals(issuer) { return }
        let accepted = self.accepted
        throw TokenError(.wrongIssuer, claim: "iss",
                         "the \(profile.tokenName) has incorrect \"iss\" (issuer) claim: expected \(AudienceRule.list(accepted)) but got \(Quoted.value(iss)). \(profile.issuerHint)")
    }
}
