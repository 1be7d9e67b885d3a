import Foundation
public import IDTokenKit
public import Vapor

extension Request {
    /// ID-token verification for this request: the logged-in ``VerifiedToken``, or an explicit verification.
    public var idToken: IDTokenRequest { IDTokenRequest(request: self) }
}

public struct IDTokenRequest: Sendable {
    let request: Request

    /// The token an ``IDTokenAuthenticator`` logged in, if any.
    public var verified: VerifiedToken? { request.auth.get(VerifiedToken.self) }

    /// Verifies the request's bearer token with the verifier registered under `profile`.
    /// - Throws: ``IDTokenRefusalError`` (401, 403 or 503 with the stable code) when there is no token or it
    ///   is refused.
    public func verify(profile: String = Application.IDTokens.defaultProfile, nonce: Nonce? = nil) async throws -> VerifiedToken {
        guard let authorization = request.headers.first(name: .authorization),
              let token = BearerToken.token(inAuthorization: authorization) else {
            throw IDTokenRefusalError(missingTokenWith: request.application.idTokens.settings)
        }
        return try await verify(token, profile: profile, nonce: nonce)
    }

    /// Verifies `token` (from a body or a cookie, say) with the verifier registered under `profile`.
    /// - Throws: ``IDTokenRefusalError`` when the token is refused; `Abort(.internalServerError)` when no
    ///   verifier has that name.
    public func verify(_ token: String, profile: String = Application.IDTokens.defaultProfile, nonce: Nonce? = nil) async throws -> VerifiedToken {
        guard let (verifier, settings) = request.application.idTokens.registered(profile) else {
            throw Abort(.internalServerError, reason: "no ID-token verifier is registered as \"\(profile)\"")
        }
        do throws(TokenError) {
            return try await verifier.verify(token, now: settings.now(), nonce: nonce).get()
        } catch {
            request.logger.info("ID token refused", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            throw IDTokenRefusalError(error, settings: settings)
        }
    }

    /// The refusal an ``IDTokenAuthenticator`` recorded for this request's token.
    public internal(set) var refusal: TokenError? {
        get { request.storage[RefusalKey.self] }
        nonmutating set { request.storage[RefusalKey.self] = newValue }
    }

    struct RefusalKey: StorageKey { typealias Value = TokenError }
}

extension IDTokenRequest {
    /// Reads the body Sign in with Apple posts to a server-to-server notification endpoint (`{"payload": "<JWT>"}`),
    /// verifies its JWT with the verifier registered under `profile`, which holds an `apple-notification` profile, and
    /// runs `handler` on its event, reserved in the profile's replay cache while it runs
    /// (``MultiProfileVerifier/deliverAppleNotification(body:now:hold:handler:)``): committed when `handler`
    /// returns, released when it throws, so that Apple's retry runs it again.
    /// - Returns: what became of the delivery: handled now (`new`), handled before (`repeated`), or being handled by
    ///   another delivery (`inProgress`: answer 503, never 200).
    /// - Throws: ``IDTokenRefusalError`` when the body or the notification is refused, or the replay store cannot
    ///   answer (503); whatever `handler` threw.
    public func deliverAppleNotification(profile: String = Application.IDTokens.defaultProfile,
                                         handler: (AppleNotification) async throws -> Void) async throws -> AppleNotificationDelivery {
        guard let (verifier, settings) = request.application.idTokens.registered(profile) else {
            throw Abort(.internalServerError, reason: "no ID-token verifier is registered as \"\(profile)\"")
        }
        let body = request.body.data.map { Array($0.readableBytesView) } ?? []
        do {
            return try await verifier.deliverAppleNotification(body: body, now: settings.now()) { _, event in try await handler(event) }
        } catch let error as TokenError {
            request.logger.info("Apple notification refused", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            throw IDTokenRefusalError(error, settings: settings)
        }
    }
}

extension RoutesBuilder {
    /// A `POST` route for Sign in with Apple's server-to-server notifications: it verifies each with the verifier
    /// registered under `profile` (an `apple-notification` profile; give it a replay cache so that a notification
    /// Apple delivers again is handled once) and hands `handler` the event. It answers 200 once `handler` returned
    /// (and at once for a notification handled before); 503 with `Retry-After` while another delivery of the same
    /// notification runs `handler` (it may still fail); whatever `handler` threw (a 500 for most errors), after
    /// which Apple's retry runs `handler` again; and a refusal as ``IDTokenRefusalError``. The handler runs at least
    /// once per notification, exactly once when nothing fails.
    ///
    /// ```swift
    /// try app.idTokens.use(.appleNotification(clientIDs: ["com.example.app"]), as: "apple-notifications",
    ///                      replayCache: MemoryReplayCache(capacity: 100_000))
    /// app.appleNotifications("apple", "notifications", profile: "apple-notifications") { request, event in
    ///     if event.type == .accountDelete { try await users.delete(appleID: event.subject) }
    /// }
    /// ```
    @discardableResult
    public func appleNotifications(_ path: PathComponent..., profile: String = Application.IDTokens.defaultProfile,
                                   use handler: @escaping @Sendable (Request, AppleNotification) async throws -> Void) -> Route {
        on(.POST, path, body: .collect(maxSize: ByteCount(value: AppleNotificationDelivery.maxBodyBytes))) { request async throws -> Response in
            switch try await request.idToken.deliverAppleNotification(profile: profile, handler: { try await handler(request, $0) }) {
            case .new, .repeated:
                return Response(status: .ok)
            case .inProgress:
                let retryAfter = request.application.idTokens.settings.retryAfterSeconds
                throw Abort(.serviceUnavailable, headers: ["Retry-After": String(retryAfter)],
                            reason: "another delivery of this notification is being handled; retry later")
            }
        }
    }
}
