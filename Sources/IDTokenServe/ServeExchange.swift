import IDTokenKit

/// What a request says, as the HTTP layer read it.
package struct ServeRequest: Sendable {
    /// The request target (path and query).
    package var target: String
    /// The `Authorization` header's value, unless ``bearerToken`` holds what it says.
    package var authorization: String?
    /// The token of an `Authorization: Bearer` header of the usual form (see
    /// `BearerToken.visibleToken(inAuthorization:of:printable:)`), read from the request's bytes by the HTTP door, which
    /// then leaves ``authorization`` nil: the same token that BearerToken would find in the whole value.
    package var bearerToken: String?
    /// A door lends the token of an `Authorization: Bearer` header of the usual form from the bytes it received (the
    /// HTTP door's request head, the gRPC door's CheckRequest), to `ServeService.decide(_:batching:lentBearerToken:)`
    /// while it holds them: then ``bearerToken`` and ``authorization`` are nil, and the token is made a string only
    /// where the request's way outlasts the call.
    package var lendsBearerToken = false

    /// Whether the request has an `Authorization` header (then its token is the credential, and no cookie is read).
    package var hasAuthorization: Bool { bearerToken != nil || authorization != nil || lendsBearerToken }

    /// The token of the `Authorization` header: nil when there is none, when it holds no bearer credential, or when
    /// it is lent (``lendsBearerToken``).
    package var authorizationToken: String? { bearerToken ?? authorization.flatMap(BearerToken.token(inAuthorization:)) }
    /// The `Cookie` header(s), joined with `; `.
    package var cookie: String?
    package var nonce: String?
    /// The App Check token header's value, when the service requires one.
    package var appCheck: String?

    package init(target: String, authorization: String? = nil, bearerToken: String? = nil, cookie: String? = nil,
                 nonce: String? = nil, appCheck: String? = nil) {
        self.target = target
        self.authorization = authorization
        self.bearerToken = bearerToken
        self.cookie = cookie
        self.nonce = nonce
        self.appCheck = appCheck
    }
}

/// An answer: status, headers (every value checked by ``IdentityHeaders/isSafe(_:)`` before it is sent), body.
package struct ServeResponse: Sendable {
    package var status: Int
    /// The identity headers of an accepted token, sent before ``headers``; nil for every other answer.
    var identity: IdentityAnswer?
    /// The answer's headers (after the identity headers, when there are any).
    package var headers: [(String, String)]
    package var body: String
    /// The verdict's code when the answer refuses a token (what `X-Auth-Error` says over HTTP): the gRPC door's
    /// `status.message`, taken from the decision rather than read back from the headers. Nil for an allow, a
    /// request without a token, and the paths that are not `/verify`.
    package var refused: TokenError.Code?
    /// The metrics slot of a `/verify` answer (see ``ServeMetrics``); nil for other paths.
    var slot: Int?
}

extension ServeResponse {
    /// Which of the answer's first 64 headers are sent (an answer has a few), one bit a position: those whose value
    /// ``IdentityHeaders/isSafe(_:)`` passes. Both doors write these and no others (and the identity headers, encoded
    /// by the rule).
    var sentHeaders: UInt64 {
        let count = min(headers.count, 64)
        // Read in place, by index: iterating the list copies each pair, a retain and a release of both strings.
        return headers.withUnsafeBufferPointer { list in
            var sent: UInt64 = 0
            for position in 0..<count where IdentityHeaders.isSafe(list[position].1) {
                sent |= 1 << position
            }
            return sent
        }
    }

    /// Calls `body` with the position, name and value of each header of `sent` (``sentHeaders``, or fewer), in order,
    /// the pairs read in place.
    func forEachHeader(in sent: UInt64, _ body: (Int, String, String) -> Void) {
        headers.withUnsafeBufferPointer { list in
            var rest = sent
            while rest != 0 {
                let position = rest.trailingZeroBitCount
                rest &= rest &- 1
                body(position, list[position].0, list[position].1)
            }
        }
    }
}

/// The answer to a request: ready now (the common case: keys cached, no store to ask), after waiting for a
/// key fetch or the Redis replay store, or (for a door that batches signatures) once the token's signature has been
/// verified with the others of its event-loop cycle.
enum ServeDecision {
    case now(ServeResponse)
    case later(@Sendable () async -> ServeResponse)
    /// Everything but the signature is decided: `then` gives the decision once it is verified
    /// (``MultiProfileVerifier/PendingToken/finish(signatureValid:)``).
    case signature(MultiProfileVerifier.PendingToken, then: (MultiProfileVerifier.Step) -> ServeDecision)
}
