import IDTokenKit

/// The fields an audit reports for each record (DESIGN §7): from the verified token, or, for a token refused,
/// what it says about itself (unverified).
public struct ReportedClaims: Sendable, Hashable {
    public var issuer: String?
    public var subject: String?
    /// `aud` as the token holds it: a string, or a list.
    public var audience: Audience?
    public var kid: String?
    /// `exp` as JSON number text, exactly as in the token.
    public var expiresText: String?
    public var expires: Double?
    /// `iat` as JSON number text.
    public var issuedAtText: String?

    public enum Audience: Sendable, Hashable {
        case single(String)
        case list([String])

        public var values: [String] {
            switch self {
            case .single(let value): return [value]
            case .list(let values): return values
            }
        }
    }

    public init() {}

    /// Reads the reported fields from a header and claims. Values of the wrong type are left out.
    public init(header: JSONObject?, claims: JSONObject?) {
        kid = header?["kid"]?.string.map { ReportedClaims.clip($0) }
        guard let claims else { return }
        issuer = claims["iss"]?.string.map { ReportedClaims.clip($0) }
        subject = claims["sub"]?.string.map { ReportedClaims.clip($0) }
        if let aud = claims["aud"] {
            if let single = aud.string {
                audience = .single(ReportedClaims.clip(single))
            } else if let elements = aud.array {
                audience = .list(elements.prefix(16).compactMap { $0.string.map { ReportedClaims.clip($0) } })
            }
        }
        if let exp = claims["exp"], exp.kind == .integer || exp.kind == .real {
            expiresText = exp.rawJSON
            expires = exp.double
        }
        if let iat = claims["iat"], iat.kind == .integer || iat.kind == .real { issuedAtText = iat.rawJSON }
    }

    /// Reports keep strings short: a token's claims are not trusted to be reasonable.
    static func clip(_ text: String) -> String {
        text.utf8.count <= 512 ? text : String(text.prefix(256)) + "…"
    }
}
