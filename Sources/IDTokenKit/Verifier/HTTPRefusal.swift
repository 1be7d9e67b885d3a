/// How an HTTP service answers a token it refuses (DESIGN §10, §11): one classification of the stable codes,
/// shared by `idtoken serve` and the Vapor and Hummingbird integrations, so that the same token gets the same
/// status and the same RFC 6750 challenge whichever of them a backend runs.
///
/// | refusal | status | `WWW-Authenticate` |
/// |---|---|---|
/// | no token | 401 | `Bearer` (with `realm` when one is set), no error (RFC 6750 §3.1) |
/// | the token is not valid (every code but those below) | 401 | `Bearer error="invalid_token", error_description="<code>"` |
/// | a valid token the policy refuses: `tenant_mismatch`, `provider_not_allowed`, `revoked` | 403 | `Bearer error="insufficient_scope", error_description="<code>"` |
/// | `keys_unavailable`, `replay_store_unavailable` | 503 with `Retry-After` | none: the token was not judged, so the client has nothing to fix |
public enum HTTPRefusal: Sendable, Equatable {
    /// No bearer token was presented.
    case missingToken
    /// The token failed verification: 401 `invalid_token`.
    case invalidToken(TokenError.Code)
    /// The token verified but a Firebase policy (tenant, sign-in provider, revocation) refuses it: 403.
    case forbidden(TokenError.Code)
    /// The keys or the replay store could not be had, so the token was not judged: 503. The code is
    /// `keys_unavailable` or `replay_store_unavailable`.
    case unavailable(TokenError.Code)

    /// The refusal for a verification error's code.
    public init(_ code: TokenError.Code) {
        switch code {
        case .tenantMismatch, .providerNotAllowed, .revoked: self = .forbidden(code)
        case .keysUnavailable, .replayStoreUnavailable: self = .unavailable(code)
        default:
            // Every other code says the token is not valid; a code added later is a 401 until classified here.
            self = .invalidToken(code)
        }
    }

    /// The stable code the response carries (`error_description`, a JSON body, an `X-Auth-Error` header); nil
    /// for a missing token.
    public var code: TokenError.Code? {
        switch self {
        case .missingToken: nil
        case .invalidToken(let code), .forbidden(let code), .unavailable(let code): code
        }
    }

    /// 401, 403 or 503.
    public var status: Int {
        switch self {
        case .missingToken, .invalidToken: 401
        case .forbidden: 403
        case .unavailable: 503
        }
    }

    /// The RFC 6750 `error` attribute: `invalid_token`, `insufficient_scope`, or nil (no token; unavailable).
    public var bearerError: String? {
        switch self {
        case .invalidToken: "invalid_token"
        case .forbidden: "insufficient_scope"
        case .missingToken, .unavailable: nil
        }
    }

    /// The `WWW-Authenticate` value, or nil for `unavailable` (a 503 is not a challenge). The codes are
    /// snake_case ASCII and a realm is quoted with `\` escapes, so the value is always a valid quoted-string
    /// list.
    public func wwwAuthenticate(realm: String? = nil) -> String? {
        if case .unavailable = self { return nil }
        var parameters: [String] = []
        if let realm { parameters.append("realm=\(Self.quoted(realm))") }
        if let bearerError, let code {
            parameters.append("error=\"\(bearerError)\"")
            parameters.append("error_description=\"\(code.rawValue)\"")
        }
        return parameters.isEmpty ? "Bearer" : "Bearer " + parameters.joined(separator: ", ")
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            if character == "\"" || character == "\\" { out.append("\\") }
            // Control characters cannot appear in a header value; a realm is configuration, so drop them.
            if character.asciiValue.map({ $0 < 0x20 || $0 == 0x7f }) ?? false { continue }
            out.append(character)
        }
        return out + "\""
    }
}

extension TokenError {
    /// How an HTTP service answers this error: see ``HTTPRefusal``.
    public var httpRefusal: HTTPRefusal { HTTPRefusal(code) }
}
