/// What a token says about itself, read without trusting it: which kind of token it is, from whom, for whom, when,
/// and — given the profile a user meant to verify it with — everything that profile would refuse and what to do
/// about it. `idtoken inspect` prints it. Nothing here verifies a signature or fetches a key: an inspection never
/// says a token is valid; ``IDTokenVerifier`` does.
public struct TokenInspection: Sendable {
    /// The kinds of token the providers hand out. The raw value is the stable name `idtoken inspect --json` prints.
    public enum Kind: String, Sendable, CaseIterable {
        /// A Firebase Authentication ID token.
        case firebase
        /// A Firebase session cookie (`createSessionCookie`).
        case firebaseSession = "firebase-session"
        /// A Firebase custom token: minted by a backend's service account for `signInWithCustomToken`.
        case firebaseCustom = "firebase-custom"
        /// A Firebase App Check token.
        case firebaseAppCheck = "firebase-app-check"
        /// A Google Sign-In ID token.
        case google
        /// A Sign in with Apple identity token.
        case apple
        /// A Sign in with Apple server-to-server notification.
        case appleNotification = "apple-notification"
        /// A Facebook Limited Login token.
        case facebook
        /// A classic Facebook access token (`EAA…`): not a JWT, so nothing can verify it offline.
        case facebookAccessToken = "facebook-access-token"
        /// A GitHub Actions OIDC token.
        case githubActions = "github-actions"
        /// An Amazon Cognito user pool ID token.
        case cognito
        /// An Amazon Cognito user pool access token.
        case cognitoAccess = "cognito-access"
        /// A Microsoft Entra ID token.
        case entra
        /// An ID token of another OpenID Connect issuer.
        case oidc
        /// Not a token this tool knows how to read.
        case unknown

        /// The kind of `provider`'s tokens: the same name.
        public init(_ provider: Provider) { self.init(rawValue: provider.rawValue)! }

        /// The profile that verifies this kind; nil for the kinds no profile verifies.
        public var provider: Provider? { Provider(rawValue: rawValue) }

        /// What a person calls it.
        public var name: String {
            switch self {
            case .firebaseCustom: return "Firebase custom token"
            case .facebookAccessToken: return "classic Facebook Login access token"
            case .oidc: return "OpenID Connect ID token"
            case .unknown: return "unrecognised text"
            default: return provider!.tokenName
            }
        }
    }

    /// A time claim in words.
    public struct Time: Sendable, Equatable {
        /// The claim (`exp`, `iat`, `nbf`, `auth_time`).
        public let claim: String
        /// Its value, Unix seconds.
        public let seconds: Double
        /// "expired 3 h ago", "issued 40 s in the future"…
        public let words: String
    }

    /// One thing the chosen profile would refuse, with the stable code the verifier would give.
    public struct Finding: Sendable {
        /// The error code the verifier would report.
        public let code: TokenError.Code
        /// The claim or header member concerned.
        public let claim: String?
        /// What is off, and what to do.
        public let message: String
    }

    /// The kind of token.
    public let kind: Kind
    /// Why the kind could not be told, or what a token of this kind is for, when that needs saying.
    public let note: String?
    /// The header's `alg`, `kid` and `typ`.
    public let algorithm: String?, keyID: String?, type: String?
    /// `iss`, `aud` (as a list), `sub`.
    public let issuer: String?, audience: [String], subject: String?
    /// The time claims, in the order `iat`, `auth_time`, `nbf`, `exp`.
    public let times: [Time]
    /// The command-line options that describe a profile for this token (`--provider google --audience …`); empty
    /// when no profile verifies this kind.
    public let suggestedOptions: [String]
    /// What the profile the caller gave would refuse; empty without one.
    public let findings: [Finding]

    /// Reads `token` as of `now` (Unix seconds); with `profile`, also judges it against that profile (its checks
    /// that need neither keys nor a signature).
    public init(_ token: String, now: Double, profile: Profile? = nil) {
        let text = token.trimmingCharacters(in: .whitespacesAndNewlines)
        let (header, claims) = UnverifiedPeek.parts(text)
        algorithm = header?["alg"]?.string
        keyID = header?["kid"]?.string
        type = header?["typ"]?.string
        guard let header, let claims else {
            let classic = TokenInspection.looksLikeFacebookAccessToken(text)
            kind = classic ? .facebookAccessToken : .unknown
            note = classic
                ? "a classic Facebook Login access token is opaque, not a JWT: only Facebook's Graph API (debug_token) can check it. Facebook Limited Login gives the app an ID token (a JWT) that can be verified offline"
                : text.isEmpty ? "no token given"
                : "not a JWT: a token is three base64url segments joined by dots, the first two JSON objects"
            issuer = nil
            audience = []
            subject = nil
            times = []
            suggestedOptions = []
            findings = profile.map { [Finding(code: .malformed, claim: nil, message: "a \($0.provider.tokenName) is a JWT; this is \(classic ? "a classic Facebook access token" : "not a JWT")")] } ?? []
            return
        }
        let claimsView = Claims(claims)
        issuer = claimsView.issuer
        audience = claimsView.audience
        let kind = TokenInspection.kind(issuer: issuer, audience: audience, claims: claimsView)
        self.kind = kind
        subject = kind == .appleNotification
            ? claims["events"].flatMap { try? AppleNotification.parse($0) }?.subject ?? claimsView.subject
            : claimsView.subject
        times = TokenInspection.times(claimsView, now: now)
        suggestedOptions = TokenInspection.options(for: kind, issuer: issuer, audience: audience, claims: claimsView)
        note = TokenInspection.note(kind)
        guard let profile else {
            findings = []
            return
        }
        if let provider = kind.provider, provider != profile.provider {
            findings = [Finding(code: .wrongIssuer, claim: "iss",
                                message: TokenInspection.advice(kind: kind, expected: profile.provider, options: suggestedOptions))]
        } else if kind.provider == nil {
            findings = [Finding(code: .wrongIssuer, claim: "iss",
                                message: "this is a \(kind.name), not a \(profile.provider.tokenName). " + (note ?? ""))]
        } else {
            findings = profile.findings(header: header, claims: claims, now: now).map {
                Finding(code: $0.code, claim: $0.claim, message: $0.message)
            }
        }
    }

    /// The Firebase Auth API a custom token is addressed to.
    static let customTokenAudience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"

    /// The kind a token's issuer and claims say it is: a Firebase custom token (by its audience), else the first
    /// provider whose definition recognises it, else any OpenID Connect issuer's.
    static func kind(issuer: String?, audience: [String], claims: Claims) -> Kind {
        guard let issuer else { return .unknown }
        if audience.contains(customTokenAudience) { return .firebaseCustom }
        for definition in ProviderDefinition.all where definition.provider != .oidc && definition.isItsToken(issuer: issuer, claims: claims) {
            return Kind(definition.provider)
        }
        return .oidc
    }

    /// `EAA` and then only letters and digits: how classic Facebook access tokens look.
    static func looksLikeFacebookAccessToken(_ text: String) -> Bool {
        text.hasPrefix("EAA") && text.utf8.count > 20
            && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
    }

    static func note(_ kind: Kind) -> String? {
        switch kind {
        case .firebaseCustom:
            return "a custom token is what a backend signs with its service account for signInWithCustomToken; the client exchanges it for a Firebase ID token (getIdToken), and that ID token is what a backend verifies"
        default:
            return kind.provider?.definition.note
        }
    }

    static func options(for kind: Kind, issuer: String?, audience: [String], claims: Claims) -> [String] {
        guard let provider = kind.provider else { return [] }
        return ["--provider", provider.rawValue] + provider.definition.suggests(issuer ?? "", audience, claims)
    }

    /// What to tell a user who meant to verify a token of `kind` as `expected`.
    static func advice(kind: Kind, expected: Provider, options: [String]) -> String {
        let verify = "verify it with " + options.joined(separator: " ")
        let what = "this is a \(kind.name), not a \(expected.tokenName)"
        switch (kind, expected) {
        case (.google, .firebase), (.apple, .firebase), (.facebook, .firebase):
            return "\(what): the app must exchange it with signInWithCredential and send the Firebase ID token (getIdToken), or \(verify)"
        case (.firebaseSession, .firebase):
            return "\(what): session cookies have their own issuer and keys; \(verify)"
        case (.firebase, .firebaseSessionCookie):
            return "\(what): an ID token is not a session cookie; create one with createSessionCookie, or \(verify)"
        case (.firebaseAppCheck, _):
            return "\(what): App Check tokens travel in X-Firebase-AppCheck beside the ID token; \(verify)"
        case (_, .firebaseAppCheck):
            return "\(what): the App Check token is the one in the X-Firebase-AppCheck header; \(verify)"
        case (.appleNotification, .apple):
            return "\(what): Apple posts notifications to the app's endpoint; \(verify)"
        case (.apple, .appleNotification):
            return "\(what): a notification carries an \"events\" claim; \(verify)"
        default:
            return "\(what); \(verify)"
        }
    }

    static func times(_ claims: Claims, now: Double) -> [Time] {
        var times: [Time] = []
        if let iat = claims.issuedAt {
            times.append(Time(claim: "iat", seconds: iat, words: iat > now ? "issued \(duration(iat - now)) in the future" : "issued \(duration(now - iat)) ago"))
        }
        if let auth = claims.authTime {
            times.append(Time(claim: "auth_time", seconds: auth,
                              words: auth > now ? "signed in \(duration(auth - now)) in the future" : "signed in \(duration(now - auth)) ago"))
        }
        if let nbf = claims.notBefore {
            times.append(Time(claim: "nbf", seconds: nbf, words: nbf > now ? "not valid for another \(duration(nbf - now))" : "valid since \(duration(now - nbf)) ago"))
        }
        if let exp = claims.expiresAt {
            times.append(Time(claim: "exp", seconds: exp, words: exp > now ? "expires in \(duration(exp - now))" : "expired \(duration(now - exp)) ago"))
        }
        return times
    }

    /// "40 s", "12 min", "3 h", "5 days": the largest unit, rounded down.
    static func duration(_ seconds: Double) -> String {
        let s = Int64(max(0, seconds.rounded(.down)))
        if s < 120 { return "\(s) s" }
        if s < 7200 { return "\(s / 60) min" }
        if s < 172_800 { return "\(s / 3600) h" }
        return "\(s / 86_400) days"
    }
}
