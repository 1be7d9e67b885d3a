/// Refuses a token whose `auth_time` is before its user's revocation time (`revoked`).
public struct RevocationRule: ClaimRule {
    /// Where users' revocation times are looked up.
    public let times: any RevocationTimes

    /// A rule refusing tokens whose `auth_time` precedes the user's revocation time in `times`.
    public init(_ times: any RevocationTimes) { self.times = times }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        guard let uid = claims[ClaimKey.sub]?.string, let revokedAt = times.revocationTime(forUser: uid) else { return }
        let cutoff = revokedAt.timeIntervalSince1970
        let authTime = try NumericDate.read(claims, ClaimKey.authTime, required: true)!
        if authTime < cutoff {
            throw TokenError(.revoked, claim: "auth_time",
                             "the \(context.tokenName) was issued for a sign-in at \(UnixTime.describe(authTime)), before the user's sessions were revoked at \(UnixTime.describe(cutoff)). The user must sign in again")
        }
    }
}
