import Foundation
import IDTokenKit

/// One provider profile of an audit, with the keys its tokens are judged with.
public struct AuditProfile: Sendable {
    /// How reports name the profile (`firebase`, or the name given in a configuration file).
    public let name: String
    public let verifier: IDTokenVerifier
    /// A fixed snapshot: every token of the audit is judged against the same keys.
    public let keys: JWKSet

    /// - Parameter cache: a verified-token cache for the profile's verifier (a long-running service answering
    ///   the same session tokens again); an audit has its own verdict cache and leaves it nil.
    /// - Throws: ``ConfigurationError`` when the profile cannot be used.
    public init(name: String? = nil, profile: Profile, keys: JWKSet, cache: VerifiedTokenCache.Configuration? = nil) throws(ConfigurationError) {
        self.name = name ?? profile.provider.rawValue
        self.verifier = try IDTokenVerifier(profile: profile, keys: keys, cache: cache)
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
///
/// Reading the payload for routing costs a base64url decoding and a JSON parse that the verifier then does
/// again. So when the header's `kid` names a key of exactly one profile, that profile's verifier is tried
/// first: if it accepts the token, the token's `iss` is one of that profile's issuers (the verifier checked it),
/// so routing by `iss` would have chosen the same profile. Only when it refuses the token is the payload read
/// for routing; if routing chooses the same profile, its answer stands, otherwise the routed profile judges.
/// The verdict is the one routing alone gives, for one payload read fewer per accepted token.
public struct ProfileJudge: TokenJudge {
    public let profiles: [AuditProfile]
    /// The profiles as the judge uses them, by reference: a record costs one retain of its route, not a copy of a
    /// profile's verifier, keys and policy.
    private let routes: [Route]
    private let byIssuer: [String: Int]
    /// Key IDs found in exactly one profile's keys: the profile a token signed with that key most likely is for.
    private let byKid: KidIndex
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
        var byKid: [String: Int] = [:]
        var ambiguous: Set<String> = []
        for (index, entry) in profiles.enumerated() {
            for kid in Set(entry.keys.kids) {
                if byKid.updateValue(index, forKey: kid) != nil { ambiguous.insert(kid) }
            }
        }
        for kid in ambiguous { byKid[kid] = nil }
        self.profiles = profiles
        self.routes = profiles.map(Route.init)
        self.nonceMode = nonceMode
        self.byIssuer = byIssuer
        self.byKid = KidIndex(byKid)
        self.peekLimits = JWSLimits(maxTokenBytes: profiles.map(\.profile.limits.maxTokenBytes).max()!,
                                    maxDepth: profiles.map(\.profile.limits.maxDepth).max()!)
    }

    public func judge(_ token: String, at: Double, nonce: String?) -> Judgement {
        if routes.count == 1 { return verify(token, with: routes[0], at: at, nonce: nonce, peeked: nil) }
        let jws: CompactJWS
        let claims: JSONObject
        do throws(TokenError) {
            jws = try CompactJWS(token, limits: peekLimits)
        } catch {
            let peek = UnverifiedPeek.parts(token, maxBytes: peekLimits.maxTokenBytes)
            return Judgement(error: error, signatureVerified: false, header: peek.header, claims: peek.claims, leeway: 0, profile: nil)
        }
        var guessed: (index: Int, judgement: Judgement)?
        if let index = jws.header.withKid({ $0.flatMap(byKid.index(of:)) }) {
            let judgement = verify(token, with: routes[index], at: at, nonce: nonce, split: jws, peeked: nil, readParts: false)
            if judgement.isValid { return judgement }
            guessed = (index, judgement)
        }
        do throws(TokenError) {
            claims = try jws.claims(maxDepth: peekLimits.maxDepth)
        } catch {
            let peek = UnverifiedPeek.parts(token, maxBytes: peekLimits.maxTokenBytes)
            return Judgement(error: error, signatureVerified: false, header: peek.header, claims: peek.claims, leeway: 0, profile: nil)
        }
        guard let iss = claims["iss"]?.string, let index = byIssuer[iss] else {
            let shown = claims["iss"].map { $0.string.map { "\"\(String($0.prefix(200)))\"" } ?? "a \($0.kind)" } ?? "no issuer"
            let known = byIssuer.keys.sorted().joined(separator: ", ")
            return Judgement(error: TokenError(.wrongIssuer, claim: "iss", "no profile of this audit accepts tokens from \(shown) (configured issuers: \(known))"),
                             signatureVerified: false, splitHeader: jws.header, claims: claims, leeway: 0, profile: nil)
        }
        if let guessed, guessed.index == index {
            // The same profile, the same split token: its verdict, with the header and claims routing read.
            var judgement = guessed.judgement
            judgement.setHeader(jws.header)
            judgement.claims = claims
            return judgement
        }
        return verify(token, with: routes[index], at: at, nonce: nonce, split: jws, peeked: (jws, claims))
    }

    /// - Parameters:
    ///   - split: the token as split with ``peekLimits``, when it was; verified as it is when the profile's
    ///     limits are the same.
    ///   - peeked: the split and the claims routing read, reported for a refused token.
    ///   - readParts: whether to read a refused token's header and claims for the report when `peeked` is nil
    ///     (not when the caller reads them itself).
    private func verify(_ token: String, with entry: Route, at: Double, nonce: String?,
                        split: CompactJWS? = nil, peeked: (CompactJWS, JSONObject)?, readParts: Bool = true) -> Judgement {
        let leeway = entry.leeway
        let limits = entry.limits
        let expected = nonce.map { (nonceMode ?? entry.nonceMode)?.expecting($0) ?? .exact($0) }
        let now = Date(timeIntervalSince1970: at)
        do throws(TokenError) {
            let verified: VerifiedToken
            if let jws = split, limits == peekLimits {
                // Routing already split the token with these limits: verify that split, not a second one.
                verified = try entry.verifier.verify(jws, keys: entry.keys, now: now, nonce: expected)
            } else {
                verified = try entry.verifier.verify(token, keys: entry.keys, now: now, nonce: expected)
            }
            return Judgement(error: nil, signatureVerified: true, splitHeader: verified.header, claims: verified.claims.object,
                             leeway: leeway, profile: entry.name)
        } catch {
            var claims = peeked?.1
            var judgement = Judgement(error: error, signatureVerified: error.code.isAfterSignature, splitHeader: peeked?.0.header,
                                      claims: nil, leeway: leeway, profile: entry.name)
            if peeked == nil && readParts {
                if let jws = try? CompactJWS(token, limits: limits) {
                    judgement.setHeader(jws.header)
                    claims = try? jws.claims(maxDepth: limits.maxDepth)
                } else {
                    let peek = UnverifiedPeek.parts(token, maxBytes: limits.maxTokenBytes)
                    judgement.header = peek.header
                    claims = peek.claims
                }
            }
            judgement.claims = claims
            return judgement
        }
    }

    /// One profile as the judge uses it, with what each record reads of its policy worked out once.
    private final class Route: Sendable {
        let name: String
        let verifier: IDTokenVerifier
        let keys: JWKSet
        let leeway: Double
        let limits: JWSLimits
        let nonceMode: NonceMode?

        init(_ profile: AuditProfile) {
            name = profile.name
            verifier = profile.verifier
            keys = profile.keys
            leeway = Double(profile.profile.leeway.seconds)
            limits = profile.profile.limits
            nonceMode = profile.profile.nonceMode
        }
    }
}
