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
    /// Reads the body Sign in with Apple posts to a server-to-server notification endpoint (`{"payload": "<JWT>"}`)
    /// and verifies its JWT with the verifier registered under `profile`, which holds an `apple-notification`
    /// profile (``MultiProfileVerifier/verifyAppleNotification(body:now:)``).
    /// - Returns: the event, or nil when the verifier's replay cache has seen this notification before.
    /// - Throws: ``IDTokenRefusalError`` when the body or the notification is refused.
    public func appleNotification(profile: String = Application.IDTokens.defaultProfile) async throws -> AppleNotification? {
        guard let (verifier, settings) = request.application.idTokens.registered(profile) else {
            throw Abort(.internalServerError, reason: "no ID-token verifier is registered as \"\(profile)\"")
        }
        let body = request.body.data.map { Array($0.readableBytesView) } ?? []
        do throws(TokenError) {
            switch try await verifier.verifyAppleNotification(body: body, now: settings.now()) {
            case .new(_, let event): return event
            case .repeated: return nil
            }
        } catch {
            request.logger.info("Apple notification refused", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            throw IDTokenRefusalError(error, settings: settings)
        }
    }
}

extension RoutesBuilder {
    /// A `POST` route for Sign in with Apple's server-to-server notifications: it verifies each with the verifier
    /// registered under `profile` (an `apple-notification` profile; give it a replay cache so that a notification
    /// Apple delivers again is handled once) and hands `handler` the event. It answers 200 once `handler` returns
    /// (and at once for a repeated notification), and a refusal as ``IDTokenRefusalError``.
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
        on(.POST, path, body: .collect(maxSize: ByteCount(value: AppleNotificationDelivery.maxBodyBytes))) { request async throws -> HTTPStatus in
            if let event = try await request.idToken.appleNotification(profile: profile) { try await handler(request, event) }
            return .ok
        }
    }
}
