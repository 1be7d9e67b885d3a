/// The issuers IDTokenKit has a profile for. The raw value is the name used on the command line and in JSON.
public enum Provider: String, Sendable, CaseIterable, Codable {
    /// Firebase Authentication ID tokens (`https://securetoken.google.com/<projectID>`).
    case firebase
    /// Firebase session cookies (`https://session.firebase.google.com/<projectID>`).
    case firebaseSessionCookie = "firebase-session"
    /// Sign in with Apple identity tokens.
    case apple
    /// Facebook Limited Login tokens.
    case facebook
    /// Any OpenID Connect issuer with a JWKS.
    case oidc
    /// Firebase App Check tokens (`https://firebaseappcheck.googleapis.com/<project number>`), sent beside the ID
    /// token in `X-Firebase-AppCheck`.
    case firebaseAppCheck = "firebase-app-check"
    /// Sign in with Apple server-to-server notifications (email-disabled, email-enabled, consent-revoked,
    /// account-delete), signed with Apple's sign-in keys.
    case appleNotification = "apple-notification"
    /// Google Sign-In ID tokens (`https://accounts.google.com`).
    case google

    /// What a person calls this kind of token, for messages.
    public var tokenName: String {
        switch self {
        case .firebase: return "Firebase ID token"
        case .firebaseSessionCookie: return "Firebase session cookie"
        case .apple: return "Sign in with Apple identity token"
        case .facebook: return "Facebook Limited Login token"
        case .oidc: return "ID token"
        case .firebaseAppCheck: return "Firebase App Check token"
        case .appleNotification: return "Sign in with Apple server notification"
        case .google: return "Google ID token"
        }
    }
}
