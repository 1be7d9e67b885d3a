import Foundation
import IDTokenKit
import IDTokenKitVapor
import Vapor

extension SignInUser: Content {}

/// A sign-in backend: the app posts the ID token it got from Firebase, Sign in with Apple or Facebook Limited
/// Login as a bearer token, and gets back the user.
///
/// - `POST /sign-in/firebase`
/// - `POST /sign-in/apple`, `POST /sign-in/facebook` with the raw nonce in `X-IDToken-Nonce`, or
///   `POST /sign-in/apple/<nonce>`, `POST /sign-in/facebook/<nonce>` with it in the path
/// - `GET /readyz`: 200 once every key set is loaded
///
/// With `FIREBASE_PROJECT_ID`, `APPLE_CLIENT_ID` and/or `FACEBOOK_APP_ID` set it verifies real tokens with the
/// providers' keys (fetched, and refreshed in the background while the application runs). With none set it runs
/// on the repository's test keys (`Vectors/`), judging each provider's test tokens at the time they were made, so
/// that the bundled tokens sign in.
public enum SignInExample {
    public static let nonceHeader = SignInDemo.nonceHeader

    /// The providers configured from the environment, or the test-key demo when none is; then the routes.
    public static func configure(_ app: Application, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let profiles = SignInDemo.configuredProfiles(environment)
        for (name, profile) in profiles { try app.idTokens.use(profile, as: name) }
        if profiles.isEmpty {
            try useTestKeys(app, vectors: SignInDemo.vectorsDirectory(environment))
            app.logger.notice("no FIREBASE_PROJECT_ID, APPLE_CLIENT_ID or FACEBOOK_APP_ID: running on the test keys in Vectors/")
        }
        routes(app)
    }

    /// The test profiles of `Vectors/generated/`, each judged at the time of its provider's test tokens.
    public static func useTestKeys(_ app: Application, vectors: String) throws {
        for (name, verifier, at) in try SignInDemo.testVerifiers(vectors: vectors) {
            app.idTokens.use(verifier, as: name, now: { at })
        }
    }

    /// The sign-in routes for whichever of firebase, apple and facebook are registered.
    public static func routes(_ app: Application) {
        let signIn = app.grouped("sign-in")
        if app.idTokens.verifier("firebase") != nil {
            signIn.grouped(app.idTokens.authenticator(profile: "firebase"), IDTokenGuardMiddleware())
                .post("firebase", use: user)
        }
        for provider in ["apple", "facebook"] where app.idTokens.verifier(provider) != nil {
            signIn.grouped(app.idTokens.authenticator(profile: provider, nonce: .header(nonceHeader)), IDTokenGuardMiddleware())
                .post(.constant(provider), use: user)
            signIn.grouped(app.idTokens.authenticator(profile: provider, nonce: .parameter("nonce")), IDTokenGuardMiddleware())
                .post(.constant(provider), ":nonce", use: user)
        }
        app.get("readyz") { req -> HTTPStatus in req.application.idTokens.keyRefresh.isReady ? .ok : .serviceUnavailable }
    }

    @Sendable static func user(_ req: Request) throws -> SignInUser {
        SignInUser(try req.auth.require(VerifiedToken.self))
    }
}
