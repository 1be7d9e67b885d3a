import Foundation
import HTTPTypes
import Hummingbird
import IDTokenKit
import IDTokenKitHummingbird

extension SignInUser: ResponseEncodable {}

/// A sign-in backend: the app posts the ID token it got from Firebase, Sign in with Apple or Facebook Limited
/// Login as a bearer token, and gets back the user.
///
/// - `POST /sign-in/firebase`
/// - `POST /sign-in/apple`, `POST /sign-in/facebook` with the raw nonce in `X-IDToken-Nonce`, or
///   `POST /sign-in/apple/<nonce>`, `POST /sign-in/facebook/<nonce>` with it in the path
/// - `GET /readyz`: 200 once every key set is loaded
///
/// With `FIREBASE_PROJECT_ID`, `APPLE_CLIENT_ID` and/or `FACEBOOK_APP_ID` set it verifies real tokens with the
/// providers' keys (fetched and refreshed in the background by the key-refresh service in the application's
/// service group). With none set it runs on the repository's test keys (`Vectors/`), judging each provider's
/// test tokens at the time they were made, so that the bundled tokens sign in.
public enum SignInExample {
    public static let nonceHeader = HTTPField.Name(SignInDemo.nonceHeader)!

    /// The providers configured from the environment, or the test-key demo when none is.
    public static func idTokens(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> IDTokens {
        var idTokens = IDTokens()
        let profiles = SignInDemo.configuredProfiles(environment)
        for (name, profile) in profiles { try idTokens.use(profile, as: name) }
        if profiles.isEmpty {
            try useTestKeys(&idTokens, vectors: SignInDemo.vectorsDirectory(environment))
            idTokens.logger.notice("no FIREBASE_PROJECT_ID, APPLE_CLIENT_ID or FACEBOOK_APP_ID: running on the test keys in Vectors/")
        }
        return idTokens
    }

    /// The test profiles of `Vectors/generated/`, each judged at the time of its provider's test tokens.
    public static func useTestKeys(_ idTokens: inout IDTokens, vectors: String) throws {
        for (name, verifier, at) in try SignInDemo.testVerifiers(vectors: vectors) {
            idTokens.use(verifier, as: name, now: { at })
        }
    }

    /// The sign-in routes for whichever of firebase, apple and facebook are registered.
    public static func addRoutes(to router: Router<BasicIDTokenRequestContext>, idTokens: IDTokens) {
        let signIn = router.group("sign-in")
        if idTokens.verifier("firebase") != nil {
            signIn.group("firebase").add(middleware: idTokens.authenticator(profile: "firebase"))
                .add(middleware: idTokens.guardMiddleware()).post(use: user)
        }
        for provider in ["apple", "facebook"] where idTokens.verifier(provider) != nil {
            signIn.group(RouterPath(provider)).add(middleware: idTokens.authenticator(profile: provider, nonce: .header(nonceHeader)))
                .add(middleware: idTokens.guardMiddleware()).post(use: user)
            signIn.group(RouterPath("\(provider)/:nonce")).add(middleware: idTokens.authenticator(profile: provider, nonce: .parameter("nonce")))
                .add(middleware: idTokens.guardMiddleware()).post(use: user)
        }
        let keyRefresh = idTokens.keyRefresh
        router.get("readyz") { _, _ -> HTTPResponse.Status in keyRefresh.isReady ? .ok : .serviceUnavailable }
    }

    @Sendable static func user(_ request: Request, context: BasicIDTokenRequestContext) throws -> SignInUser {
        SignInUser(try context.requireIdentity())
    }

    /// The application: the router and the key-refresh service in one service group.
    public static func application(idTokens: IDTokens, configuration: ApplicationConfiguration = .init(),
                                   router: Router<BasicIDTokenRequestContext>? = nil) -> some ApplicationProtocol {
        let router = router ?? Router(context: BasicIDTokenRequestContext.self)
        addRoutes(to: router, idTokens: idTokens)
        return Application(router: router, configuration: configuration, services: [idTokens.keyRefresh])
    }
}
