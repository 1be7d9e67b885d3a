/// The published key-set URLs of the providers in DESIGN §4.
public enum ProviderKeyURL {
    /// Firebase ID tokens (securetoken): the JWKS form.
    public static let firebase = "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
    /// Firebase ID tokens: the same keys as a kid → PEM X.509 certificate map.
    public static let firebaseCertificates = "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"
    /// Firebase session cookies.
    public static let firebaseSessionCookies = "https://www.googleapis.com/identitytoolkit/v3/relyingparty/publicKeys"
    /// Sign in with Apple identity tokens.
    public static let apple = "https://appleid.apple.com/auth/keys"
    /// Facebook Limited Login tokens.
    public static let facebook = "https://limited.facebook.com/.well-known/oauth/openid/jwks/"

    /// The default URL for a provider name as the CLI spells it (`firebase`, `firebase-x509`, `apple`,
    /// `facebook`), or nil for `oidc` and unknown names, which need a configured `jwks_uri`.
    public static func defaultURL(forProvider name: String) -> String? {
        switch name.lowercased() {
        case "firebase": firebase
        case "firebase-x509", "firebase-certificates": firebaseCertificates
        case "firebase-session", "firebase-session-cookie": firebaseSessionCookies
        case "apple": apple
        case "facebook": facebook
        default: nil
        }
    }
}
