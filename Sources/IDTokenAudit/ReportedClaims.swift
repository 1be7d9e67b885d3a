import IDTokenKit

/// The fields an audit reports for each record (DESIGN §7): from the verified token, or, for a token refused,
/// what it says about itself (unverified). A class: a result is copied several times on its way to the output,
/// and one reference costs less to copy than six strings.
public final class ReportedClaims: Sendable, Hashable {
    public let issuer: String?
    public let subject: String?
    /// `aud` as the token holds it: a string, or a list.
    public let audience: Audience?
    public let kid: String?
    /// `exp` as JSON number text, exactly as in the token.
    public let expiresText: String?
    public let expires: Double?
    /// `iat` as JSON number text.
    public let issuedAtText: String?

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

    /// No fields: a line without a readable token.
    public static let none = ReportedClaims(header: nil, claims: nil)

    /// Reads the reported fields from a header and claims. Values of the wrong type are left out.
    public convenience init(header: JSONObject?, claims: JSONObject?) {
        self.init(header: header, claims: claims, interning: nil)
    }

    /// - Parameter interners: share the strings of values that recur across tokens (`kid`, `iss`, `aud`).
    init(header: JSONObject?, claims: JSONObject?, interning interners: ClaimInterners?) {
        func text(_ value: JSONValue?, _ interner: StringInterner?) -> String? {
            guard let value else { return nil }
            return (interner.map { $0.string(value) } ?? value.string).map { ReportedClaims.clip($0) }
        }
        kid = text(header?[Keys.kid], interners?.kid)
        issuer = text(claims?[Keys.iss], interners?.issuer)
        subject = claims?[Keys.sub]?.string.map { ReportedClaims.clip($0) }
        if let aud = claims?[Keys.aud] {
            if aud.kind == .string {
                audience = text(aud, interners?.audience).map { .single($0) }
            } else if let elements = aud.array {
                audience = .list(elements.prefix(16).compactMap { text($0, interners?.audience) })
            } else {
                audience = nil
            }
        } else {
            audience = nil
        }
        if let exp = claims?[Keys.exp], exp.kind == .integer || exp.kind == .real {
            expiresText = exp.rawJSON
            expires = exp.double
        } else {
            expiresText = nil
            expires = nil
        }
        if let iat = claims?[Keys.iat], iat.kind == .integer || iat.kind == .real { issuedAtText = iat.rawJSON } else { issuedAtText = nil }
    }

    /// The names read from every token, hashed once.
    enum Keys {
        static let kid = JSONKey("kid")
        static let iss = JSONKey("iss")
        static let sub = JSONKey("sub")
        static let aud = JSONKey("aud")
        static let exp = JSONKey("exp")
        static let iat = JSONKey("iat")
        static let nbf = JSONKey("nbf")
        static let authTime = JSONKey("auth_time")
    }

    public static func == (a: ReportedClaims, b: ReportedClaims) -> Bool {
        a.issuer == b.issuer && a.subject == b.subject && a.audience == b.audience && a.kid == b.kid
            && a.expiresText == b.expiresText && a.issuedAtText == b.issuedAtText
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(issuer)
        hasher.combine(subject)
        hasher.combine(kid)
        hasher.combine(expiresText)
    }

    /// Reports keep strings short: a token's claims are not trusted to be reasonable.
    static func clip(_ text: String) -> String {
        text.utf8.count <= 512 ? text : String(text.prefix(256)) + "…"
    }
}
