import Foundation
import IDTokenKit

/// One provider profile of an audit, with the keys its tokens are judged with.
public struct AuditProfile: Sendable {
    /// How reports name the profile (`firebase`, or the name given in a configuration file).
    public let name: String
    public let verifier: IDTokenVerifier
    /// A fixed snapshot: every token of the audit is judged against the same keys.
    public let keys: JWKSet

    /// - Throws: ``ConfigurationError`` when the profile cannot be used.
    public init(name: String? = nil, profile: Profile, keys: JWKSet) throws(ConfigurationError) {
        self.name = name ?? profile.provider.rawValue
        self.verifier = try IDTokenVerifier(profile: profile, keys: keys)
        self.keys = keys
    }

    public var profile: Profile { verifier.profile }
}

/// Judges tokens with IDTokenKit's verifier (DESIGN §2) against one profile, or routes each token to one of
/// several profiles by its `iss`.
///
/// With one profile every token is verified by it, and a foreign issuer is that verifier's `wrong_issuer`.
/// With several, the payload's `iss` is read first (unverified: it only chooses the profile, whose verifier
/// then checks everything, the issuer included); a token whose issuer no profile accepts is `wrong_issuer`.
/// A record's nonce is the raw nonce: hashed for profiles whose provider hashes it (Apple, Facebook), compared
/// exactly otherwise.
public struct ProfileJudge: TokenJudge {
    public let profiles: [AuditProfile]
    private let byIssuer: [String: Int]
    private let peekLimits: JWSLimits
    /// How every record's nonce is compared, when the caller chose; otherwise each profile's own mode.
    public let nonceMode: NonceMode?

    /// - Parameter nonceMode: compare every record's nonce this way (`--nonce` hashes, `--nonce-exact` does
    ///   not); nil: as each profile's provider does.
    /// - Throws: ``ConfigurationError`` when there is no profile or two profiles accept the same issuer.
    public init(profiles: [AuditProfile], nonceMode: NonceMode? = nil) throws(ConfigurationError) {
        guard !profiles.isEmpty else { throw ConfigurationError("an audit needs at least one profile") }
        var byIssuer: [String: Int] = [:]
        for (index, entry) in profiles.enumerated() {
            for issuer in entry.profile.issuers {
                if let other = byIssuer[issuer] {
                    throw ConfigurationError("profiles \"\(profiles[other].name)\" and \"\(entry.name)\" both accept the issuer \(issuer); each issuer may have one profile")
                }
                byIssuer[issuer] = index
            }
        }
        self.profiles = profiles
        self.nonceMode = nonceMode
        self.byIssuer = byIssuer
        self.peekLimits = JWSLimits(maxTokenBytes: profiles.map(\.profile.limits.maxTokenBytes).max()!,
                                    maxDepth: profiles.map(\.profile.limits.maxDepth).max()!)
    }

    public func judge(_ token: String, at: Double, nonce: String?) -> Judgement {
        if profiles.count == 1 { return verify(token, with: profiles[0], at: at, nonce: nonce, peeked: nil) }
        let jws: CompactJWS
        let claims: JSONObject
        do throws(TokenError) {
            jws = try CompactJWS(token, limits: peekLimits)
            claims = try jws.claims(maxDepth: peekLimits.maxDepth)
        } catch {
            let peek = UnverifiedPeek.parts(token, maxBytes: peekLimits.maxTokenBytes)
            return Judgement(error: error, signatureVerified: false, header: peek.header, claims: peek.claims, leeway: 0, profile: nil)
        }
        guard let iss = claims["iss"]?.string, let index = byIssuer[iss] else {
            let shown = claims["iss"].map { $0.string.map { "\"\(String($0.prefix(200)))\"" } ?? "a \($0.kind)" } ?? "no issuer"
            let known = byIssuer.keys.sorted().joined(separator: ", ")
            return Judgement(error: TokenError(.wrongIssuer, claim: "iss", "no profile of this audit accepts tokens from \(shown) (configured issuers: \(known))"),
                             signatureVerified: false, header: jws.header.object, claims: claims, leeway: 0, profile: nil)
        }
        return verify(token, with: profiles[index], at: at, nonce: nonce, peeked: (jws, claims))
    }

    private func verify(_ token: String, with entry: AuditProfile, at: Double, nonce: String?,
                        peeked: (CompactJWS, JSONObject)?) -> Judgement {
        let profile = entry.profile
        let leeway = Double(profile.leeway.seconds)
        let expected = nonce.map { (nonceMode ?? profile.nonceMode)?.expecting($0) ?? .exact($0) }
        let now = Date(timeIntervalSince1970: at)
        do throws(TokenError) {
            let verified: VerifiedToken
            if let (jws, _) = peeked, profile.limits == peekLimits {
                // Routing already split the token with these limits: verify that split, not a second one.
                verified = try entry.verifier.verify(jws, keys: entry.keys, now: now, nonce: expected)
            } else {
                verified = try entry.verifier.verify(token, keys: entry.keys, now: now, nonce: expected)
            }
            return Judgement(error: nil, signatureVerified: true, header: verified.header.object, claims: verified.claims.object,
                             leeway: leeway, profile: entry.name)
        } catch {
            var header = peeked?.0.header.object
            var claims = peeked?.1
            if peeked == nil {
                if let jws = try? CompactJWS(token, limits: profile.limits) {
                    header = jws.header.object
                    claims = try? jws.claims(maxDepth: profile.limits.maxDepth)
                } else {
                    (header, claims) = UnverifiedPeek.parts(token, maxBytes: profile.limits.maxTokenBytes)
                }
            }
            return Judgement(error: error, signatureVerified: error.code.isAfterSignature, header: header, claims: claims,
                             leeway: leeway, profile: entry.name)
        }
    }
}
