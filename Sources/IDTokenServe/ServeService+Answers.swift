import Foundation
import IDTokenKit
import Logging

/// The contract's answers (DESIGN §10): a refusal as `HTTPRefusal` classifies it, an accepted token as a 200 with
/// the identity headers.
extension ServeService {
    func refusal(_ error: TokenError, profile: String?) -> ServeResponse {
        // The one classification of refusals (HTTPRefusal) that the Vapor and Hummingbird integrations answer with
        // too: 401 invalid_token, 403 insufficient_scope, 503 without a challenge (the token was not judged).
        let refusal = error.httpRefusal
        let status = refusal.status
        let code = error.code.rawValue
        var headers: [(String, String)] = [("X-Auth-Error", code), ("Cache-Control", "no-store")]
        if let challenge = refusal.wwwAuthenticate(realm: settings.realm) { headers.insert(("WWW-Authenticate", challenge), at: 0) }
        if status == 503 { headers.append(("Retry-After", String(settings.retryAfterSeconds))) }
        // The line's metadata is only built when the line is written (a refused request is the cheap path of a
        // flood of forged tokens).
        if logger.logLevel <= .info {
            var metadata: Logger.Metadata = ["code": "\(code)", "status": "\(status)",
                                             "message": "\(IdentityHeaders.encode(String(error.message.prefix(300))))"]
            if let profile { metadata["profile"] = "\(profile)" }
            if let claim = error.claim { metadata["claim"] = "\(IdentityHeaders.encode(claim))" }
            logger.info("refused", metadata: metadata)
        }
        var response = ServeResponse(status: status, headers: headers, body: "")
        response.slot = ServeMetrics.slot(error.code)
        response.refused = error.code
        return response
    }

    /// - Parameter token: the token as received, whose payload segment `X-Auth-Claims` passes on when the identity
    ///   headers are rendered (not for a token answered from its kept rendering).
    func allow(_ verified: VerifiedToken, profile name: String, token: String, replayOrNonce: Bool) -> ServeResponse {
        // A token seen before carries its identity headers as this service rendered them on its first answer; a
        // cached token without them yet gets them laid out and kept; a token that is not cached (the cache off, or
        // its miss) is answered with the headers as they are, since nothing would use a layout again.
        var identity: IdentityAnswer?
        var headers: [(String, String)] = []
        let expiresAt: Double
        if let kept = verified.memo?.value as? IdentityAnswer, kept.renderer == ObjectIdentifier(self), kept.profile == name {
            identity = kept
            expiresAt = kept.expiresAt
        } else {
            expiresAt = verified.expiresAt
            switch identityHeaders(verified, profile: name, payload: ProfileVerification.segment(of: token, verified.payloadRange)) {
            case .failure(let error): return refusal(error, profile: name)
            case .success(let rendered):
                if let memo = verified.memo {
                    identity = IdentityAnswer(renderer: ObjectIdentifier(self), profile: name, headers: rendered, expiresAt: expiresAt)
                    memo.keep(identity!)
                } else {
                    headers = rendered
                }
            }
        }
        // The identity headers rendered here are encoded by the rule, so the doors need not check them again.
        let safe = identity == nil ? headers.count : 0
        if replayOrNonce || settings.maxCacheAgeSeconds == 0 {
            headers.append(("Cache-Control", "no-store"))
        } else {
            let seconds = max(0, min(Int(expiresAt - now), settings.maxCacheAgeSeconds))
            if seconds >= cacheControlHeaders.count {
                headers.append(("Cache-Control", "private, max-age=\(seconds)"))
            } else if headers.isEmpty {
                headers = cacheControlHeaders[seconds]     // the kept list itself: no list is made
            } else {
                headers.append(cacheControlHeaders[seconds][0])
            }
        }
        var response = ServeResponse(status: 200, identity: identity, headers: headers, body: "")
        response.safeHeaders = safe
        response.slot = 0
        return response
    }

    /// The identity headers of an accepted token, encoded by ``IdentityHeaders``; an identifier whose encoding is
    /// longer than `serve.maxIdentityHeaderBytes` refuses the token (`invalid_claim`), since a cut one could be
    /// another user's.
    private func identityHeaders(_ verified: VerifiedToken, profile name: String, payload: Substring?) -> Result<[(String, String)], TokenError> {
        let claims = verified.claims.object
        let limit = settings.maxIdentityHeaderBytes
        var headers: [(String, String)] = []
        headers.reserveCapacity(10)
        func add(_ header: String, _ claim: String, _ encoded: String) -> TokenError? {
            guard encoded.utf8.count <= limit else {
                return TokenError(.invalidClaim, claim: claim, "the \"\(claim)\" claim is longer than the service passes on (\(limit) bytes encoded); identity headers are never cut")
            }
            headers.append((header, encoded))
            return nil
        }
        // Each string claim is encoded from its bytes in the payload (VerifiedToken's `subject`, `issuer`: the
        // claim, or empty when it is missing or not a string); an Apple notification's subject is in its events.
        let subject = verified.provider == .appleNotification ? IdentityHeaders.encode(verified.subject)
            : claims.withString(ClaimKey.sub, IdentityHeaders.encode) ?? ""
        if let error = add("X-Auth-Subject", "sub", subject) { return .failure(error) }
        if let error = add("X-Auth-Issuer", "iss", claims.withString(ClaimKey.iss, IdentityHeaders.encode) ?? "") { return .failure(error) }
        headers.append(("X-Auth-Provider", verified.provider.rawValue))
        headers.append(("X-Auth-Profile", IdentityHeaders.encode(name)))
        if let kind = claims.kind(of: ClaimKey.aud) {
            // A string is a list of one; an array of strings is the list; anything else is an empty list.
            let encoded = kind == .string ? claims.withString(ClaimKey.aud, IdentityHeaders.encode) ?? ""
                : IdentityHeaders.encodeList(verified.claims.audience)
            guard encoded.utf8.count <= limit else {
                return .failure(TokenError(.invalidClaim, claim: "aud", "the \"aud\" claim is longer than the service passes on (\(limit) bytes encoded)"))
            }
            headers.append(("X-Auth-Audience", encoded))
        }
        let expires: Double
        switch claims.number(ClaimKey.exp) {
        case .integer(let seconds): expires = Double(seconds)
        case .real(let seconds): expires = seconds
        case .missing, .notANumber: expires = 0
        }
        headers.append(("X-Auth-Expires", String(Int64(expires))))
        if claims.kind(of: ClaimKey.email) == .string, AppleClaims.flexibleBool(claims, ClaimKey.emailVerified) == true,
           let email = claims.withString(ClaimKey.email, IdentityHeaders.encode) {
            if let error = add("X-Auth-Email", "email", email) { return .failure(error) }
        }
        // The payload segment as the token carries it: already base64url, so already a safe header value.
        if let payload, payload.utf8.count <= settings.maxClaimsHeaderBytes {
            headers.append(("X-Auth-Claims", String(payload)))
        } else {
            headers.append(("X-Auth-Claims-Omitted", "too-large"))
        }
        assert(headers.allSatisfy { IdentityHeaders.isSafe($0.1) }, "an identity header value the encoding rule should have made safe")
        return .success(headers)
    }
}
