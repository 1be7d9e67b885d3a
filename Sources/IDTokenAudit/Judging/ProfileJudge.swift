import Foundation
import IDTokenKit

/// One provider profile of an audit, with the keys its tokens are judged with.
package struct AuditProfile: Sendable {
    /// How reports name the profile (`firebase`, or the name given in a configuration file).
    package let name: String
    package let verifier: IDTokenVerifier
    /// A fixed snapshot: every token of the audit is judged against the same keys.
    package let keys: JWKSet

    /// - Parameter cache: a verified-token cache for the profile's verifier (a long-running service answering
    ///   the same session tokens again); an audit has its own verdict cache and leaves it nil.
    /// - Throws: ``ConfigurationError`` when the profile cannot be used.
    package init(name: String? = nil, profile: Profile, keys: JWKSet, cache: VerifiedTokenCache.Configuration? = nil) throws(ConfigurationError) {
        self.name = name ?? profile.provider.rawValue
        self.verifier = try IDTokenVerifier(profile: profile, keys: keys, cache: cache)
        self.keys = keys
    }

    package var profile: Profile { verifier.profile }
}

/// Judges tokens with IDTokenKit's verifier (DESIGN §2) against one profile, or routes each token to one of
/// several profiles by its `iss`.
///
/// With one profile every token is verified by it, and a foreign issuer is that verifier's `wrong_issuer`.
/// With several, the payload's `iss` is read first (unverified: it only chooses the profile, whose verifier
/// then checks everything, the issuer included); a token whose issuer no profile accepts is `wrong_issuer`.
/// A record's nonce is the raw nonce: compared as the judge's ``nonceMode`` says when the caller chose one,
/// otherwise as each profile's provider carries it (``Profile/nonceMode``).
///
/// Each record is split once, and its signature verified at most once, whatever the routing. When the
/// header's `kid` names a key of exactly one profile, that profile's verifier is tried first
/// (`IDTokenVerifier.evaluate(_:keys:at:nonce:)` on the split token): if it accepts the token, the token's
/// `iss` is one of that profile's issuers (the verifier checked it), so routing by `iss` would have chosen the
/// same profile. Only when it refuses the token is the `iss` it read used for routing; if routing chooses the
/// same profile, its answer stands, otherwise the routed profile judges — and since the `kid` is in no other
/// profile's keys, that profile refuses the token before its signature. The verdict is the one routing alone
/// gives, for one payload read fewer per accepted token.
package struct ProfileJudge: TokenJudge {
    package let profiles: [AuditProfile]
    /// The profiles as the judge uses them, by reference: a record costs one retain of its route, not a copy of a
    /// profile's verifier, keys and policy.
    private let routes: [Route]
    private let byIssuer: [String: Int]
    private let peekLimits: JWSLimits
    /// The keys whose `kid` is in exactly one profile's key set, indexed by `kid` as every key set is, and the
    /// profile each belongs to: a token signed with one of them is most likely for that profile.
    private let routingKeys: JWKSet
    private let profileOfKey: [ObjectIdentifier: Int]
    /// How every record's nonce is compared, when the caller chose; otherwise each profile's own mode.
    package let nonceMode: Nonce.Mode?

    /// - Parameter nonceMode: compare every record's nonce this way (`--nonce` hashes, `--nonce-exact` does
    ///   not); nil: as each profile's provider does.
    /// - Throws: ``ConfigurationError`` when there is no profile or two profiles accept the same issuer.
    package init(profiles: [AuditProfile], nonceMode: Nonce.Mode? = nil) throws(ConfigurationError) {
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
        var owners: [String: Int] = [:]
        var ambiguous: Set<String> = []
        for (index, entry) in profiles.enumerated() {
            for kid in Set(entry.keys.kids) where owners.updateValue(index, forKey: kid) != nil { ambiguous.insert(kid) }
        }
        var routingKeys: [PublicKey] = []
        var profileOfKey: [ObjectIdentifier: Int] = [:]
        for (kid, index) in owners where !ambiguous.contains(kid) {
            guard let key = profiles[index].keys.key(kid: kid) else { continue }
            routingKeys.append(key)
            profileOfKey[ObjectIdentifier(key)] = index
        }
        self.routingKeys = JWKSet(keys: routingKeys)
        self.profileOfKey = profileOfKey
        self.profiles = profiles
        self.routes = profiles.map(Route.init)
        self.nonceMode = nonceMode
        self.byIssuer = byIssuer
        self.peekLimits = JWSLimits(maxTokenBytes: profiles.map(\.profile.limits.maxTokenBytes).max()!,
                                    maxDepth: profiles.map(\.profile.limits.maxDepth).max()!)
    }

    package func judge(_ token: String, at: Double, nonce: String?) -> Judgement {
        let expected = nonce.map { Nonce($0, mode: nonceMode) }
        let now = Date(timeIntervalSince1970: at)
        if routes.count == 1 {
            let route = routes[0]
            do throws(TokenError) {
                let jws = try CompactJWS(token, limits: route.limits)
                return judgement(route.verifier.evaluate(jws, keys: route.keys, at: now, nonce: expected), route, routingClaims: nil)
            } catch {
                return unsplit(error, token, limits: route.limits, leeway: route.leeway, profile: route.name)
            }
        }
        let jws: CompactJWS
        do throws(TokenError) {
            jws = try CompactJWS(token, limits: peekLimits)
        } catch {
            return unsplit(error, token, limits: peekLimits, leeway: 0, profile: nil)
        }
        var guessed: (index: Int, verification: Verification)?
        if let index = jws.header.withKid({ $0.flatMap(profileHolding(kid:)) }) {
            let verification = evaluate(token, jws, with: routes[index], at: now, nonce: expected, routingClaims: nil)
            if verification.isAccepted { return judgement(verification, routes[index], routingClaims: nil) }
            guessed = (index, verification)
        }
        // The payload for routing: as the guessed profile's verifier read it, or read here.
        let claims: JSONObject
        if let guessed, case .refused(_, _, _, let read?) = guessed.verification {
            claims = read
        } else {
            do throws(TokenError) {
                claims = try jws.claims(maxDepth: peekLimits.maxDepth)
            } catch {
                return unsplit(error, token, limits: peekLimits, leeway: 0, profile: nil)
            }
        }
        guard let iss = claims["iss"]?.string, let index = byIssuer[iss] else {
            let shown = claims["iss"].map { $0.string.map { "\"\(String($0.prefix(200)))\"" } ?? "a \($0.kind)" } ?? "no issuer"
            let known = byIssuer.keys.sorted().joined(separator: ", ")
            return Judgement(error: TokenError(.wrongIssuer, claim: "iss", "no profile of this audit accepts tokens from \(shown) (configured issuers: \(known))"),
                             signatureVerified: false, splitHeader: jws.header, claims: claims, leeway: 0, profile: nil)
        }
        if let guessed, guessed.index == index {
            // The same profile, the same split token: its verdict stands.
            return judgement(guessed.verification, routes[index], routingClaims: claims)
        }
        let route = routes[index]
        return judgement(evaluate(token, jws, with: route, at: now, nonce: expected, routingClaims: claims), route,
                         routingClaims: claims)
    }

    /// The one profile whose keys hold the key `kid` (its UTF-8 bytes, as the header holds them): the profile a
    /// token signed with that key most likely is for; nil when no profile or several do. The key-set index
    /// answers (`JWKSet.key(kid:)` on the bytes): no `String` of the kid is made.
    private func profileHolding(kid: UnsafeBufferPointer<UInt8>) -> Int? {
        routingKeys.key(kid: kid).flatMap { profileOfKey[ObjectIdentifier($0)] }
    }

    /// `route`'s verdict on the token `jws`, split with ``peekLimits``: verified as it is when the profile's
    /// limits are the same (the usual case), split again under the profile's own limits otherwise.
    /// - Parameter routingClaims: the payload routing read, when it did: a refusal before the signature then
    ///   reports it rather than reading the payload again.
    private func evaluate(_ token: String, _ jws: CompactJWS, with route: Route, at now: Date, nonce: Nonce?,
                          routingClaims: JSONObject?) -> Verification {
        let reads = routingClaims == nil
        if route.limits == peekLimits {
            return route.verifier.evaluate(jws, keys: route.keys, at: now, nonce: nonce, readingRefusedClaims: reads)
        }
        do throws(TokenError) {
            let own = try CompactJWS(token, limits: route.limits)
            return route.verifier.evaluate(own, keys: route.keys, at: now, nonce: nonce, readingRefusedClaims: reads)
        } catch {
            return .refused(error, signatureVerified: false, header: jws.header, claims: nil)
        }
    }

    /// The judgement of `route`'s verification; a refusal that did not read the payload reports `routingClaims`.
    private func judgement(_ verification: Verification, _ route: Route, routingClaims: JSONObject?) -> Judgement {
        switch verification {
        case .accepted(let verified):
            return Judgement(error: nil, signatureVerified: true, splitHeader: verified.header, claims: verified.claims.object,
                             leeway: route.leeway, profile: route.name)
        case .refused(let error, let signatureVerified, let header, let claims):
            return Judgement(error: error, signatureVerified: signatureVerified, splitHeader: header,
                             claims: claims ?? routingClaims, leeway: route.leeway, profile: route.name)
        }
    }

    /// A token that could not be split: its header and payload as far as they read, for the report.
    private func unsplit(_ error: TokenError, _ token: String, limits: JWSLimits, leeway: Double, profile: String?) -> Judgement {
        let peek = UnverifiedPeek.parts(token, maxBytes: limits.maxTokenBytes)
        return Judgement(error: error, signatureVerified: false, header: peek.header, claims: peek.claims, leeway: leeway, profile: profile)
    }

    /// One profile as the judge uses it, with what each record reads of its policy worked out once.
    private final class Route: Sendable {
        let name: String
        let verifier: IDTokenVerifier
        let keys: JWKSet
        let leeway: Double
        let limits: JWSLimits

        init(_ profile: AuditProfile) {
            name = profile.name
            verifier = profile.verifier
            keys = profile.keys
            leeway = Double(profile.profile.leeway.seconds)
            limits = profile.profile.limits
        }
    }
}
