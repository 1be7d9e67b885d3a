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
