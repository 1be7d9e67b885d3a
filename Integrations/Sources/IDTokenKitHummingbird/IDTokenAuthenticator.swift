import Foundation
public import HTTPTypes
public import Hummingbird
public import HummingbirdAuth
public import IDTokenKit
import Logging

/// A request context whose identity is a ``VerifiedToken`` and that keeps the refusal of a presented token, so
/// that ``IDTokenGuardMiddleware`` can answer with its stable code.
public protocol IDTokenRequestContext: AuthRequestContext where Identity == VerifiedToken {
    var idTokenRefusal: TokenError? { get set }
}

/// The request context for routers that need nothing else.
public struct BasicIDTokenRequestContext: IDTokenRequestContext, RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: VerifiedToken?
    public var idTokenRefusal: TokenError?

    public init(source: Source) {
        self.coreContext = .init(source: source)
    }
}

/// Where a route's raw nonce comes from: the app decides, per route.
public enum IDTokenNonceSource: Sendable {
    /// A request header (such as `X-IDToken-Nonce`).
    case header(HTTPField.Name)
    /// A route parameter (`/sign-in/:nonce`).
    case parameter(String)

    func raw(_ request: Request, _ context: some RequestContext) -> String? {
        switch self {
        case .header(let name): request.headers[name]
        case .parameter(let name): context.parameters.get(name)
        }
    }

    var label: String {
        switch self {
        case .header(let name): "header \(name)"
        case .parameter(let name): "route parameter \(name)"
        }
    }

    /// The nonce the request carries, compared as the deciding profile's nonce mode says (exact when it has none).
    /// - Throws: `nonce_mismatch` when the request carries none: a route that expects one never verifies without it.
    func expectation(_ request: Request, _ context: some RequestContext) throws(TokenError) -> Nonce {
        guard let raw = raw(request, context), !raw.isEmpty else {
            throw TokenError(.nonceMismatch, claim: "nonce", "the request carries no nonce in the \(label)")
        }
        return Nonce(raw)
    }
}

/// Sets the context's identity to the ``VerifiedToken`` of the request's bearer token.
///
/// A request without a bearer token passes through untouched; one whose token is refused passes through without
/// an identity and with the refusal in ``IDTokenRequestContext/idTokenRefusal``; ``IDTokenGuardMiddleware``
/// answers 401, 403 or 503 for both. The verifier is captured when the middleware is made: no lookup per request.
public struct IDTokenAuthenticator<Context: IDTokenRequestContext>: AuthenticatorMiddleware {
    public typealias Identity = VerifiedToken
    /// Verifies every token: one profile, or several routed by the token's issuer.
    public let verifier: MultiProfileVerifier
    public let nonce: IDTokenNonceSource?
    let settings: IDTokenSettings
    let logger: Logger

    public init(verifier: MultiProfileVerifier, nonce: IDTokenNonceSource? = nil, settings: IDTokenSettings = IDTokenSettings(),
                logger: Logger = Logger(label: "IDTokenKitHummingbird")) {
        self.verifier = verifier
        self.nonce = nonce
        self.settings = settings
        self.logger = logger
    }

    public init(verifier: IDTokenVerifier, nonce: IDTokenNonceSource? = nil, settings: IDTokenSettings = IDTokenSettings(),
                logger: Logger = Logger(label: "IDTokenKitHummingbird")) {
        self.init(verifier: MultiProfileVerifier(verifier), nonce: nonce, settings: settings, logger: logger)
    }

    /// The verified token, or nil when there is none or it is refused.
    public func authenticate(request: Request, context: Context) async throws -> VerifiedToken? {
        try? await verify(request, context)?.get()
    }

    public func handle(_ request: Request, context: Context,
                       next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        switch await verify(request, context) {
        case .success(let token): context.identity = token
        case .failure(let error): context.idTokenRefusal = error
        case nil: break
        }
        return try await next(request, context)
    }

    private func verify(_ request: Request, _ context: Context) async -> Result<VerifiedToken, TokenError>? {
        guard let token = request.headers.bearerToken else { return nil }
        do throws(TokenError) {
            let expected = try nonce?.expectation(request, context)
            return .success(try await verifier.verify(token, now: settings.now(), nonce: expected).get())
        } catch {
            context.logger.info("ID token refused", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            return .failure(error)
        }
    }
}

/// Lets a request through only with a ``VerifiedToken`` identity; otherwise answers as ``HTTPRefusal`` says:
/// 401 with `WWW-Authenticate: Bearer` (no token), 401 `invalid_token` or 403 `insufficient_scope` with the
/// stable code, 503 with `Retry-After` for `keys_unavailable`.
public struct IDTokenGuardMiddleware<Context: IDTokenRequestContext>: RouterMiddleware {
    public let settings: IDTokenSettings

    public init(settings: IDTokenSettings = IDTokenSettings()) { self.settings = settings }

    public func handle(_ request: Request, context: Context,
                       next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.identity != nil else {
            throw HTTPError(refusal: context.idTokenRefusal?.httpRefusal ?? .missingToken, settings: settings)
        }
        return try await next(request, context)
    }
}

extension HTTPError {
    /// A refusal as Hummingbird's error: the status, `WWW-Authenticate` and `Retry-After` of ``HTTPRefusal``,
    /// and the stable code as the message (`{"error": {"message": "expired"}}`).
    public init(refusal: HTTPRefusal, settings: IDTokenSettings = IDTokenSettings()) {
        var headers = HTTPFields()
        if let challenge = refusal.wwwAuthenticate(realm: settings.realm) { headers[.wwwAuthenticate] = challenge }
        if case .unavailable = refusal { headers[.retryAfter] = String(settings.retryAfterSeconds) }
        self.init(HTTPResponse.Status(code: refusal.status), headers: headers, message: refusal.code?.rawValue ?? "missing_token")
    }
}

extension IDTokens {
    /// Verifies the request's bearer token with the verifier registered under `profile`, for routes that verify
    /// explicitly.
    /// - Throws: `HTTPError` with the refusal's status, challenge and code.
    public func verify(_ request: Request, context: some RequestContext, profile: String = defaultProfile,
                       nonce: Nonce? = nil) async throws -> VerifiedToken {
        guard let token = request.headers.bearerToken else { throw HTTPError(refusal: .missingToken, settings: settings) }
        return try await verify(token, context: context, profile: profile, nonce: nonce)
    }

    /// Verifies `token` (from a body or a cookie, say) with the verifier registered under `profile`.
    public func verify(_ token: String, context: some RequestContext, profile: String = defaultProfile,
                       nonce: Nonce? = nil) async throws -> VerifiedToken {
        guard let (verifier, settings) = registered(profile) else {
            throw HTTPError(.internalServerError, message: "no ID-token verifier is registered as \"\(profile)\"")
        }
        do throws(TokenError) {
            return try await verifier.verify(token, now: settings.now(), nonce: nonce).get()
        } catch {
            context.logger.info("ID token refused", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            throw HTTPError(refusal: error.httpRefusal, settings: settings)
        }
    }
}

extension HTTPFields {
    /// The token of the `Authorization` field, read by IDTokenKit's ``BearerToken``: the scheme compared without
    /// regard to case (RFC 9110 §11.1), whitespace inside a token making it no bearer credential. The same reader
    /// as `idtoken serve` and the Vapor integration, so that one header gets one answer everywhere.
    var bearerToken: String? { self[.authorization].flatMap(BearerToken.token(inAuthorization:)) }
}

extension IDTokens {
    /// Reads the body Sign in with Apple posts to a server-to-server notification endpoint (`{"payload": "<JWT>"}`),
    /// verifies its JWT with the verifier registered under `profile`, which holds an `apple-notification` profile, and
    /// runs `handler` on its event, reserved in the profile's replay cache while it runs
    /// (``MultiProfileVerifier/deliverAppleNotification(body:now:hold:handler:)``): committed when `handler`
    /// returns, released when it throws, so that Apple's retry runs it again.
    /// - Returns: what became of the delivery: handled now (`new`), handled before (`repeated`), or being handled by
    ///   another delivery (`inProgress`: answer 503, never 200).
    /// - Throws: `HTTPError` with the refusal's status and code (503 when the replay store cannot answer);
    ///   whatever `handler` threw.
    public func deliverAppleNotification(_ request: Request, context: some RequestContext, profile: String = defaultProfile,
                                         handler: (AppleNotification) async throws -> Void) async throws -> AppleNotificationDelivery {
        guard let (verifier, settings) = registered(profile) else {
            throw HTTPError(.internalServerError, message: "no ID-token verifier is registered as \"\(profile)\"")
        }
        let buffer = try await request.body.collect(upTo: AppleNotificationDelivery.maxBodyBytes)
        do {
            return try await verifier.deliverAppleNotification(body: Array(buffer.readableBytesView), now: settings.now()) { _, event in
                try await handler(event)
            }
        } catch let error as TokenError {
            context.logger.info("Apple notification refused", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            throw HTTPError(refusal: error.httpRefusal, settings: settings)
        }
    }

    /// Adds a `POST` route for Sign in with Apple's server-to-server notifications to `router`: each is verified by
    /// the verifier registered under `profile` (an `apple-notification` profile; give it a replay cache so that a
    /// notification Apple delivers again is handled once) and `handler` gets the event. It answers 200 once
    /// `handler` returned (and at once for a notification handled before); 503 with `Retry-After` while another
    /// delivery of the same notification runs `handler` (it may still fail); whatever `handler` threw (a 500 for most
    /// errors), after which Apple's retry runs `handler` again; and a refusal with its status and code. The handler
    /// runs at least once per notification, exactly once when nothing fails.
    ///
    /// ```swift
    /// try idTokens.use(.appleNotification(clientIDs: ["com.example.app"]), as: "apple-notifications",
    ///                  replayCache: MemoryReplayCache(capacity: 100_000))
    /// idTokens.appleNotifications(on: router, "/apple/notifications", profile: "apple-notifications") { request, context, event in
    ///     if event.type == .accountDelete { try await users.delete(appleID: event.subject) }
    /// }
    /// ```
    public func appleNotifications<Context: RequestContext>(
        on router: Router<Context>, _ path: RouterPath, profile: String = defaultProfile,
        use handler: @escaping @Sendable (Request, Context, AppleNotification) async throws -> Void
    ) {
        let idTokens = self
        router.post(path) { request, context -> HTTPResponse.Status in
            switch try await idTokens.deliverAppleNotification(request, context: context, profile: profile,
                                                               handler: { try await handler(request, context, $0) }) {
            case .new, .repeated:
                return .ok
            case .inProgress:
                throw HTTPError(.serviceUnavailable, headers: [.retryAfter: String(idTokens.settings.retryAfterSeconds)],
                                message: "another delivery of this notification is being handled; retry later")
            }
        }
    }
}
