import Foundation
public import IDTokenKit
public import Vapor

extension VerifiedToken: @retroactive Authenticatable {}

/// Where a route's raw nonce comes from: the app decides, per route.
public enum IDTokenNonceSource: Sendable {
    /// A request header (such as `X-IDToken-Nonce`).
    case header(String)
    /// A route parameter (`/sign-in/:nonce`).
    case parameter(String)

    /// The raw nonce of `request`, or nil when it carries none.
    func raw(_ request: Request) -> String? {
        switch self {
        case .header(let name): request.headers.first(name: name)
        case .parameter(let name): request.parameters.get(name)
        }
    }

    var label: String {
        switch self {
        case .header(let name): "header \(name)"
        case .parameter(let name): "route parameter \(name)"
        }
    }

    /// The nonce `request` carries, compared as the deciding profile's nonce mode says (exact when it has none).
    /// - Throws: `nonce_mismatch` when the request carries no nonce: a route that expects one never verifies
    ///   without it.
    func expectation(_ request: Request) throws(TokenError) -> Nonce {
        guard let raw = raw(request), !raw.isEmpty else {
            throw TokenError(.nonceMismatch, claim: "nonce", "the request carries no nonce in the \(label)")
        }
        return Nonce(raw)
    }
}

/// Logs in the ``VerifiedToken`` of the request's bearer token.
///
/// A request without a bearer token passes through untouched; one whose token is refused passes through
/// without an identity, and the refusal (its stable code) is kept on the request for ``IDTokenGuardMiddleware``,
/// which answers 401, 403 or 503. The verifier is captured when the authenticator is made: no lookup per request.
public struct IDTokenAuthenticator: AsyncBearerAuthenticator {
    /// Verifies every token: one profile, or several routed by the token's issuer.
    public let verifier: MultiProfileVerifier
    public let nonce: IDTokenNonceSource?
    let settings: IDTokenSettings

    public init(verifier: MultiProfileVerifier, nonce: IDTokenNonceSource? = nil, settings: IDTokenSettings = IDTokenSettings()) {
        self.verifier = verifier
        self.nonce = nonce
        self.settings = settings
    }

    public init(verifier: IDTokenVerifier, nonce: IDTokenNonceSource? = nil, settings: IDTokenSettings = IDTokenSettings()) {
        self.init(verifier: MultiProfileVerifier(verifier), nonce: nonce, settings: settings)
    }

    /// Reads the bearer token with ``BearerToken`` instead of Vapor's `headers.bearerAuthorization`, which splits
    /// the header into `Character`s: for a Firebase token that took more CPU than its RSA verify.
    public func authenticate(request: Request) async throws {
        guard let authorization = request.headers.first(name: .authorization),
              let token = BearerToken.token(inAuthorization: authorization) else { return }
        await authenticate(token, for: request)
    }

    public func authenticate(bearer: BearerAuthorization, for request: Request) async throws {
        await authenticate(bearer.token, for: request)
    }

    func authenticate(_ token: String, for request: Request) async {
        do throws(TokenError) {
            let expected = try nonce?.expectation(request)
            request.auth.login(try await verifier.verify(token, now: settings.now(), nonce: expected).get())
        } catch {
            request.idToken.refusal = error
            request.logger.info("ID token refused", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
        }
    }
}

/// Lets a request through only with a ``VerifiedToken`` logged in; otherwise answers as ``HTTPRefusal`` says:
/// 401 with `WWW-Authenticate: Bearer` (no token), 401 `invalid_token` or 403 `insufficient_scope` with the
/// stable code, 503 with `Retry-After` for `keys_unavailable`.
public struct IDTokenGuardMiddleware: AsyncMiddleware {
    public let settings: IDTokenSettings?

    /// - Parameter settings: the realm and `Retry-After`; the application's ``IDTokenSettings`` when nil.
    public init(settings: IDTokenSettings? = nil) { self.settings = settings }

    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.auth.has(VerifiedToken.self) else {
            let settings = settings ?? request.application.idTokens.settings
            if let refusal = request.idToken.refusal { throw IDTokenRefusalError(refusal, settings: settings) }
            throw IDTokenRefusalError(missingTokenWith: settings)
        }
        return try await next.respond(to: request)
    }
}

/// A refused token as Vapor's error: the status, `WWW-Authenticate` and `Retry-After` of ``HTTPRefusal``, and
/// the stable code as the reason (`{"error": true, "reason": "expired"}` from Vapor's `ErrorMiddleware`).
public struct IDTokenRefusalError: AbortError, CustomStringConvertible {
    public let refusal: HTTPRefusal
    /// The verification error, when there was a token.
    public let tokenError: TokenError?
    let settings: IDTokenSettings

    public init(_ error: TokenError, settings: IDTokenSettings = IDTokenSettings()) {
        self.refusal = error.httpRefusal
        self.tokenError = error
        self.settings = settings
    }

    public init(missingTokenWith settings: IDTokenSettings = IDTokenSettings()) {
        self.refusal = .missingToken
        self.tokenError = nil
        self.settings = settings
    }

    public var status: HTTPResponseStatus { HTTPResponseStatus(statusCode: refusal.status) }

    public var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        if let challenge = refusal.wwwAuthenticate(realm: settings.realm) { headers.add(name: .wwwAuthenticate, value: challenge) }
        if case .unavailable = refusal { headers.add(name: .retryAfter, value: String(settings.retryAfterSeconds)) }
        return headers
    }

    public var reason: String { refusal.code?.rawValue ?? "missing_token" }

    public var description: String { tokenError?.description ?? "no bearer token" }
}
