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
    ///   headers are rendered (not for a token answered from its kept rendering, which needs nothing of it).
    func allow<Token: TokenText>(_ verified: VerifiedToken, profile name: String, token: Token, replayOrNonce: Bool) -> ServeResponse {
        // A token seen before carries its identity headers as this service rendered them on its first answer; a
        // cached token without them yet gets them laid out and kept; a token that is not cached (the cache off, or
        // its miss) gets them laid out for this answer only.
        let identity: IdentityAnswer
        if let kept = verified.memo?.value as? IdentityAnswer, kept.renderer == ObjectIdentifier(self), kept.profile == name {
            identity = kept
        } else {
            let rendered = token.withBytes { bytes in
                identityHeaders(verified, profile: name, payload: UnsafeRawBufferPointer(rebasing: bytes[verified.payloadRange]))
            }
            switch rendered {
            case .failure(let error): return refusal(error, profile: name)
            case .success(let rendered):
                // Kept with the cached token, laid out for the gRPC door too; otherwise used for this answer only,
                // and laid out for the gRPC door only if that door writes it.
                let kept = verified.memo != nil
                identity = IdentityAnswer(renderer: ObjectIdentifier(self), profile: name, http: rendered,
                                          expiresAt: verified.expiresAt, laysOutGRPC: kept)
                if kept { verified.memo?.keep(identity) }
            }
        }
        let headers: [(String, String)]
        if replayOrNonce || settings.maxCacheAgeSeconds == 0 {
            headers = [("Cache-Control", "no-store")]
        } else {
            let seconds = max(0, min(Int(identity.expiresAt - now), settings.maxCacheAgeSeconds))
            // The kept list itself where there is one: no list is made.
            headers = seconds < cacheControlHeaders.count ? cacheControlHeaders[seconds]
                : [("Cache-Control", "private, max-age=\(seconds)")]
        }
        var response = ServeResponse(status: 200, identity: identity, headers: headers, body: "")
        response.slot = 0
        return response
    }

    /// The identity headers of an accepted token, encoded by ``IdentityHeaders`` and laid out as the HTTP door writes
    /// them (`Name: value\r\n` each), straight from the claims' bytes: no string a header. An identifier whose encoding
    /// is longer than `serve.maxIdentityHeaderBytes` refuses the token (`invalid_claim`), since a cut one could be
    /// another user's.
    private func identityHeaders(_ verified: VerifiedToken, profile name: String, payload: UnsafeRawBufferPointer) -> Result<[UInt8], TokenError> {
        let claims = verified.claims.object
        var out = IdentityLines(limit: settings.maxIdentityHeaderBytes, capacity: 320 + payload.count)
        // Each string claim is encoded from its bytes in the payload (VerifiedToken's `subject`, `issuer`: the
        // claim, or empty when it is missing or not a string); an Apple notification's subject is in its events.
        let subject = verified.provider == .appleNotification ? out.line("X-Auth-Subject: ", "sub", verified.subject)
            : claims.withString(IdentityClaimKeys.sub) { out.line("X-Auth-Subject: ", "sub", $0) } ?? out.line("X-Auth-Subject: ", "sub", "")
        if let subject { return .failure(subject) }
        if let error = claims.withString(IdentityClaimKeys.iss, { out.line("X-Auth-Issuer: ", "iss", $0) }) ?? out.line("X-Auth-Issuer: ", "iss", "") {
            return .failure(error)
        }
        out.line("X-Auth-Provider: ", verified.provider.rawValue)
        out.line("X-Auth-Profile: ", name)
        if let kind = claims.kind(of: IdentityClaimKeys.aud) {
            // A string is a list of one; an array of strings is the list; anything else is an empty list.
            let error = kind == .string
                ? claims.withString(IdentityClaimKeys.aud) { out.line("X-Auth-Audience: ", "aud", $0) } ?? out.line("X-Auth-Audience: ", "aud", "")
                : out.line("X-Auth-Audience: ", "aud", IdentityHeaders.encodeList(verified.claims.audience))
            if let error { return .failure(error) }
        }
        out.line("X-Auth-Expires: ", Int64(claims.number(IdentityClaimKeys.exp).double ?? 0))
        if claims.kind(of: IdentityClaimKeys.email) == .string, AppleClaims.flexibleBool(claims, IdentityClaimKeys.emailVerified) == true,
           let error = claims.withString(IdentityClaimKeys.email, { out.line("X-Auth-Email: ", "email", $0) }) ?? nil {
            return .failure(error)
        }
        // The payload segment as the token carries it: already base64url, so already a safe header value.
        if payload.count <= settings.maxClaimsHeaderBytes {
            out.verbatim("X-Auth-Claims: ", payload.assumingMemoryBound(to: UInt8.self))
        } else {
            out.line("X-Auth-Claims-Omitted: ", "too-large")
        }
        assert(out.bytes.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 13 || $0 == 10 }, "an identity header the encoding rule should have made safe")
        return .success(out.bytes)
    }
}

/// Identity header lines (`Name: value\r\n`) written one after another, each value encoded by ``IdentityHeaders``,
/// each line straight into the bytes' spare room.
private struct IdentityLines {
    private(set) var bytes: [UInt8] = []
    /// The longest encoded identifier passed on (`serve.maxIdentityHeaderBytes`).
    let limit: Int

    init(limit: Int, capacity: Int) {
        self.limit = limit
        bytes.reserveCapacity(capacity)
    }

    /// The line of a claim's value, encoded; nil, or the refusal of a value whose encoding is longer than the limit.
    mutating func line(_ start: StaticString, _ claim: String, _ value: UnsafeBufferPointer<UInt8>) -> TokenError? {
        let limit = self.limit
        guard write(start, value, encoded: true) <= limit else {
            return TokenError(.invalidClaim, claim: claim, "the \"\(claim)\" claim is longer than the service passes on (\(limit) bytes encoded); identity headers are never cut")
        }
        return nil
    }

    mutating func line(_ start: StaticString, _ claim: String, _ value: String) -> TokenError? {
        value.withBorrowedUTF8 { line(start, claim, $0) }
    }

    /// The line of a value the service chose (a provider, a profile's name, a number), encoded, whatever its length.
    mutating func line(_ start: StaticString, _ value: String) {
        value.withBorrowedUTF8 { _ = write(start, $0, encoded: true) }
    }

    /// The line of a number the service computed (`X-Auth-Expires`): its decimal digits, written in place.
    mutating func line(_ start: StaticString, _ value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            // Nineteen digits at most, and a sign.
            var magnitude = value.magnitude, at = 20
            repeat {
                at -= 1
                digits[at] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                at -= 1
                digits[at] = UInt8(ascii: "-")
            }
            _ = write(start, UnsafeBufferPointer(rebasing: digits[at...]), encoded: false)
        }
    }

    /// The line of a value that is a safe header value as it is (the payload segment, base64url).
    mutating func verbatim(_ start: StaticString, _ value: UnsafeBufferPointer<UInt8>) {
        _ = write(start, value, encoded: false)
    }

    /// Writes `start`, the value (encoded, or as it is) and CRLF; returns the written value's length.
    private mutating func write(_ start: StaticString, _ value: UnsafeBufferPointer<UInt8>, encoded: Bool) -> Int {
        let name = start.utf8CodeUnitCount
        var length = 0
        bytes.appendWriting(atMost: name + (encoded ? 3 : 1) * value.count + 2) { out in
            out.update(from: start.utf8Start, count: name)
            if encoded {
                length = IdentityHeaders.write(value, encodedTo: out + name)
            } else {
                if let base = value.baseAddress { (out + name).update(from: base, count: value.count) }
                length = value.count
            }
            out[name + length] = 13
            out[name + length + 1] = 10
            return name + length + 2
        }
        return length
    }
}

/// The claims the identity headers read, as keys of this module's own. A look-up through IDTokenKit's `ClaimKey`
/// copies the key out of that module's global and destroys the copy again (eight of them a distinct token, some 660
/// instructions, `bench/callgrind.sh serve-http-distinct`); a global of this module is read where it is.
private enum IdentityClaimKeys {
    static let sub = JSONKey("sub"), iss = JSONKey("iss"), aud = JSONKey("aud"), exp = JSONKey("exp"),
               email = JSONKey("email"), emailVerified = JSONKey("email_verified")
}
