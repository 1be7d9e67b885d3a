/// Read access to a token's claims. Each accessor decodes its value when asked, from the payload bytes the
/// token was verified over; nothing is copied into a dictionary.
///
/// Accessors return nil when a claim is absent or not of the expected type. Claims IDTokenKit does not know
/// are reachable by name (``subscript(_:)``, ``string(_:)``…) and never fail a token.
public struct Claims: Sendable {
    /// The claims object as parsed.
    public let object: JSONObject

    /// The claims in `object`.
    public init(_ object: JSONObject) { self.object = object }

    /// Any claim, by name.
    public subscript(_ name: String) -> JSONValue? { object[name] }

    /// Whether the token has a claim of this name.
    public func contains(_ name: String) -> Bool { object.contains(name) }

    /// A string claim.
    public func string(_ name: String) -> String? { object[name]?.string }

    /// An integer claim.
    public func int(_ name: String) -> Int64? { object[name]?.int64 }

    /// A boolean claim.
    public func bool(_ name: String) -> Bool? { object[name]?.bool }

    /// A NumericDate claim in seconds since 1970 (integral or fractional).
    public func seconds(_ name: String) -> Double? {
        guard let value = object[name], value.kind == .integer || value.kind == .real else { return nil }
        return value.double
    }

    /// An array of strings (nil if the claim is not an array or holds anything else).
    public func strings(_ name: String) -> [String]? { object[name].flatMap(Claims.strings) }

    static func strings(_ value: JSONValue) -> [String]? {
        guard let elements = value.array else { return nil }
        var out: [String] = []
        out.reserveCapacity(elements.count)
        for element in elements {
            guard let text = element.string else { return nil }
            out.append(text)
        }
        return out
    }

    // MARK: Registered claims

    /// `iss`.
    public var issuer: String? { string("iss") }
    /// `sub`: the user's identifier at the issuer.
    public var subject: String? { string("sub") }
    /// `aud` as a list, whether the token holds a string or an array.
    public var audience: [String] {
        guard let aud = object["aud"] else { return [] }
        if let single = aud.string { return [single] }
        return Claims.strings(aud) ?? []
    }
    /// `exp`, in Unix seconds.
    public var expiresAt: Double? { object.number(ClaimKey.exp).double }
    /// `nbf`, in Unix seconds.
    public var notBefore: Double? { object.number(ClaimKey.nbf).double }
    /// `iat`, in Unix seconds.
    public var issuedAt: Double? { object.number(ClaimKey.iat).double }
    /// When the user signed in (`auth_time`).
    public var authTime: Double? { object.number(ClaimKey.authTime).double }
    /// `nonce`.
    public var nonce: String? { string("nonce") }
    /// `email`.
    public var email: String? { string("email") }
    /// `email_verified`, read as a boolean or the strings `"true"` / `"false"`.
    public var emailVerified: Bool? { object["email_verified"].flatMap(AppleClaims.flexibleBool) }
    /// `name`: chosen by the user, so treat it as untrusted text.
    public var name: String? { string("name") }
    /// `picture`: a URL.
    public var picture: String? { string("picture") }
    /// The JWT ID (`jti`).
    public var jwtID: String? { string("jti") }

    /// The claims as JSON text, exactly as signed.
    public var rawJSON: String { object.rawJSON }
}
