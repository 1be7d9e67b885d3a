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
    /// `exp` as the token writes it.
    package let expiresNumber: NumberText?
    package let expires: Double?
    /// `iat` as the token writes it.
    package let issuedAtNumber: NumberText?

    /// `exp` as JSON number text, exactly as in the token.
    package var expiresText: String? { expiresNumber?.text }
    /// `iat` as JSON number text, exactly as in the token.
    package var issuedAtText: String? { issuedAtNumber?.text }

    /// A JSON number's literal exactly as a token writes it (reports copy it, they never reformat a number). A
    /// literal of up to 24 bytes (every integer, and the usual real) is held in place, not in a string: making a
    /// string of it checked its UTF-8 again, about 230 instructions a number, two numbers a record.
    package struct NumberText: Sendable, Hashable {
        private var head: (UInt64, UInt64, UInt64) = (0, 0, 0)
        /// The literal's length when it is held in `head`.
        private var count = 0
        /// A literal over 24 bytes.
        private var long: String?

        /// A number's literal, as the reader accepted it.
        init(_ literal: UnsafeBufferPointer<UInt8>) {
            if literal.count <= MemoryLayout.size(ofValue: head) {
                withUnsafeMutableBytes(of: &head) { $0.copyMemory(from: UnsafeRawBufferPointer(literal)) }
                count = literal.count
            } else {
                long = String(decoding: literal, as: UTF8.self)
            }
        }

        /// The literal's length in bytes.
        var byteCount: Int { long?.utf8.count ?? count }

        /// Calls `body` with the literal's bytes.
        @inline(__always)
        func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            if let long { return long.withBorrowedUTF8(body) }
            return withUnsafeBytes(of: head) { raw in
                raw.withMemoryRebound(to: UInt8.self) { body(UnsafeBufferPointer(rebasing: $0[..<count])) }
            }
        }

        /// The literal.
        package var text: String { long ?? withBytes { String(decoding: $0, as: UTF8.self) } }

        package static func == (a: NumberText, b: NumberText) -> Bool {
            a.withBytes { x in b.withBytes { y in x.elementsEqual(y) } }
        }

        package func hash(into hasher: inout Hasher) {
            withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

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
            expiresNumber = nil
            expires = nil
            issuedAtNumber = nil
            return
        }
        // The five claims read in one walk over the members (a look-up each would walk them again), by their
        // three-letter names.
        let issuers = interners?.issuer, audiences = interners?.audience
        var issuer: String?, subject: String?, audience: Audience?
        // exp's and iat's literals, where the document holds them (a number is lent as written, in place): kept
        // after the walk, so that the closure holds nothing but pointers and stays inlined in it.
        var exp: (kind: JSONKind, literal: UnsafeBufferPointer<UInt8>)?, iat: UnsafeBufferPointer<UInt8>?
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
                if kind == .integer || kind == .real { exp = (kind, value) }
            case ReportedClaims.iat:
                if kind == .integer || kind == .real { iat = value }
            default:
                break
            }
        }
        if let exp {
            expiresNumber = NumberText(exp.literal)
            // An integer (the usual time) is read from its literal here; a real by the reader's own parse.
            expires = exp.kind == .integer ? Double(ReportedClaims.integer(exp.literal)) : claims.number(ClaimKey.exp).double
        } else {
            expiresNumber = nil
            expires = nil
        }
        issuedAtNumber = iat.map { NumberText($0) }
        if audienceIsList {
            let elements = claims[ClaimKey.aud]?.array ?? []
            audience = .list(elements.prefix(16).compactMap { element in element.withStringBytes { text($0, audiences) } })
        }
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
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
            && a.expiresNumber == b.expiresNumber && a.issuedAtNumber == b.issuedAtNumber
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(issuer)
        hasher.combine(subject)
        hasher.combine(kid)
        hasher.combine(expiresNumber)
    }

    /// Reports keep strings short: a token's claims are not trusted to be reasonable.
    static func clip(_ text: String) -> String {
        text.utf8.count <= 512 ? text : String(text.prefix(256)) + "…"
    }
}
