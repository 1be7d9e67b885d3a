import IDTokenKit

/// The fields an audit reports for each record (DESIGN §7): from the verified token, or, for a token refused,
/// what it says about itself (unverified). Held inline in the ``VerdictCache/Verdict`` that results refer to, so
/// that a verdict is one allocation and a result copies none of these strings.
package struct ReportedClaims: Sendable, Hashable {
    package let issuer: String?
    package let subject: String?
    /// `aud` as the token holds it: a string, or a list.
    package let audience: Audience?
    package let kid: String?
    /// `exp` as JSON number text, exactly as in the token.
    package let expiresText: String?
    package let expires: Double?
    /// `iat` as JSON number text.
    package let issuedAtText: String?

    package enum Audience: Sendable, Hashable {
        case single(String)
        case list([String])

        package var values: [String] {
            switch self {
            case .single(let value): return [value]
            case .list(let values): return values
            }
        }
    }

    /// No fields: a line without a readable token.
    package static let none = ReportedClaims(header: nil, claims: nil)

    /// Reads the reported fields from a header and claims. Values of the wrong type are left out.
    package init(header: JSONObject?, claims: JSONObject?) {
        self.init(ProfileVerification(error: nil, signatureVerified: false, header: header, claims: claims, leeway: 0,
                                      profile: nil),
                  interning: nil)
    }

    /// Reads the reported fields of a verification's header and claims, in place (no `JSONValue`, no string but
    /// the ones kept).
    ///
    /// - Parameter interners: share the strings of values that recur across tokens (`kid`, `iss`, `aud`).
    init(_ judgement: borrowing ProfileVerification, interning interners: ClaimInterners?) {
        func text(_ bytes: UnsafeBufferPointer<UInt8>, _ interner: StringInterner?) -> String {
            ReportedClaims.clip(interner?.string(bytes) ?? String(decoding: bytes, as: UTF8.self))
        }
        kid = judgement.withKid { bytes in bytes.map { text($0, interners?.kid) } }
        // Borrowed, not copied: a copy of the verification retains and releases each of its references.
        guard let claims = judgement.claims else {
            issuer = nil
            subject = nil
            audience = nil
            expiresText = nil
            expires = nil
            issuedAtText = nil
            return
        }
        // The five claims read in one walk over the members (a look-up each would walk them again), by their
        // three-letter names.
        let issuers = interners?.issuer, audiences = interners?.audience
        var issuer: String?, subject: String?, audience: Audience?
        var exp: (text: String, seconds: Double?)?, iat: String?
        var audienceIsList = false
        claims.forEachMember(decodingStrings: true) { name, kind, value in
            guard name.count == 3 else { return }
            switch UInt32(name[0]) | UInt32(name[1]) << 8 | UInt32(name[2]) << 16 {
            case ReportedClaims.iss:
                if kind == .string { issuer = text(value, issuers) }
            case ReportedClaims.sub:
                if kind == .string { subject = ReportedClaims.clip(String(decoding: value, as: UTF8.self)) }
            case ReportedClaims.aud:
                if kind == .string { audience = .single(text(value, audiences)) } else { audienceIsList = kind == .array }
            case ReportedClaims.exp:
                // An integer (the usual time) is read from its text here; a real by the reader's own parse.
                if kind == .integer { exp = (String(decoding: value, as: UTF8.self), Double(ReportedClaims.integer(value))) }
                if kind == .real { exp = (String(decoding: value, as: UTF8.self), claims.number(ClaimKey.exp).double) }
            case ReportedClaims.iat:
                if kind == .integer || kind == .real { iat = String(decoding: value, as: UTF8.self) }
            default:
                break
            }
        }
        if audienceIsList {
            let elements = claims[ClaimKey.aud]?.array ?? []
            audience = .list(elements.prefix(16).compactMap { element in element.withStringBytes { text($0, audiences) } })
        }
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        expiresText = exp?.text
        expires = exp?.seconds
        issuedAtText = iat
    }

    /// The reported claims' names as the three bytes of a little-endian word (see `init(_:interning:)`): constants
    /// the compiler folds.
    private static var iss: UInt32 { name("i", "s", "s") }
    private static var sub: UInt32 { name("s", "u", "b") }
    private static var aud: UInt32 { name("a", "u", "d") }
    private static var exp: UInt32 { name("e", "x", "p") }
    private static var iat: UInt32 { name("i", "a", "t") }

    @inline(__always)
    private static func name(_ a: Unicode.Scalar, _ b: Unicode.Scalar, _ c: Unicode.Scalar) -> UInt32 {
        UInt32(UInt8(ascii: a)) | UInt32(UInt8(ascii: b)) << 8 | UInt32(UInt8(ascii: c)) << 16
    }

    /// The value of a JSON integer literal that the strict reader accepted (so it fits in Int64).
    static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64 {
        var k = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { k = 1 }
        // Accumulated below zero, where Int64 reaches one further than above.
        var value: Int64 = 0
        while k < text.count {
            value = value &* 10 &- Int64(text[k] &- UInt8(ascii: "0"))
            k += 1
        }
        return negative ? value : 0 &- value
    }

    package static func == (a: ReportedClaims, b: ReportedClaims) -> Bool {
        a.issuer == b.issuer && a.subject == b.subject && a.audience == b.audience && a.kid == b.kid
            && a.expiresText == b.expiresText && a.issuedAtText == b.issuedAtText
    }

    package func hash(into hasher: inout Hasher) {
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
