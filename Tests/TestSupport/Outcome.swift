import JOSE

/// What the verifier did with a token: accepted it, or rejected it with a stable code.
public enum Outcome: Hashable, Sendable, CustomStringConvertible {
    case accepted
    case rejected(TokenError.Code)

    public var description: String {
        switch self {
        case .accepted: return "accepted"
        case .rejected(let code): return "rejected(\(code.rawValue))"
        }
    }

    /// Runs pipeline steps 1–4 (shape, header, key, signature) the way a verifier with a pinned algorithm
    /// list does: `CompactJWS`, then `selectKey`, then `verifySignature`.
    public static func ofSignature(_ token: String, keys: JWKSet, allowed: Set<JWSAlgorithm>, requireKid: Bool = true,
                            limits: JWSLimits = .default) -> Outcome {
        do {
            let jws = try CompactJWS(token, limits: limits)
            let key = try jws.selectKey(from: keys, allowed: allowed, requireKid: requireKid)
            return jws.verifySignature(with: key) ? .accepted : .rejected(.badSignature)
        } catch {
            return .rejected(error.code)
        }
    }

    /// Runs pipeline steps 1–5 through ``CompactJWS/verify(_:keys:allowed:requireKid:limits:)``.
    public static func ofVerification(_ token: String, keys: JWKSet, allowed: Set<JWSAlgorithm>, requireKid: Bool = true,
                               limits: JWSLimits = .default) -> Outcome {
        do {
            _ = try CompactJWS.verify(token, keys: keys, allowed: allowed, requireKid: requireKid, limits: limits)
            return .accepted
        } catch {
            return .rejected(error.code)
        }
    }
}
