/// The issuers IDTokenKit has a profile for. The raw value is the name used on the command line and in JSON; each
/// provider's options, profile and recognition are its ``definition`` (``ProviderDefinition``).
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
    /// GitHub Actions OIDC tokens (`https://token.actions.githubusercontent.com`): a workflow run's identity.
    case githubActions = "github-actions"
    /// Amazon Cognito user pool ID tokens (`https://cognito-idp.REGION.amazonaws.com/POOL_ID`).
    case cognito
    /// Amazon Cognito user pool access tokens: the same issuer, `token_use` `access`, the app client in `client_id`.
    case cognitoAccess = "cognito-access"
    /// Microsoft Entra ID tokens (`https://login.microsoftonline.com/<tenant ID>/v2.0`), of listed tenants or, on
    /// purpose, of any.
    case entra
}
