/// The one error every verification failure is reported as.
///
/// The ``Code`` is the stable part of the contract: libraries, the `idtoken` tool's JSON and audit reports all
/// carry it, and tests compare it. The message is for people and may change wording between releases; it is
/// built lazily so that rejecting a token costs no string formatting unless somebody reads the message.
public struct TokenError: Error, Sendable, CustomStringConvertible, Equatable {
    /// A stable error code (DESIGN §3). Its ``rawValue`` is what appears in JSON output, HTTP headers and reports.
    ///
    /// A struct with one static member per code rather than an enum, so that a release adding a code does not
    /// break a client's `switch` (which needs a `default:` branch). Codes compare as small integers.
    public struct Code: Hashable, Sendable, RawRepresentable, CaseIterable, Codable, CustomStringConvertible {
        @usableFromInline let index: UInt8

        @inlinable init(index: UInt8) { self.index = index }

        /// The codes' names, in the order of their indices.
        private static let names: [String] = [
            "malformed",
            "token_too_large",
            "algorithm_not_allowed",
            "unsupported_header",
            "unknown_key",
            "bad_signature",
            "expired",
            "not_yet_valid",
            "issued_in_future",
            "wrong_issuer",
            "wrong_audience",
            "invalid_claim",
            "nonce_mismatch",
            "replayed",
            "tenant_mismatch",
            "provider_not_allowed",
            "revoked",
            "keys_unavailable",
            "replay_store_unavailable",
        ]

        /// The code named `rawValue` (`"bad_signature"`…), or nil for a name this release does not know.
        public init?(rawValue: String) {
            guard let i = Self.names.firstIndex(of: rawValue) else { return nil }
            index = UInt8(i)
        }

        public var rawValue: String { Self.names[Int(index)] }
        public var description: String { rawValue }
        public static var allCases: [Code] { (0..<names.count).map { Code(index: UInt8($0)) } }

        public init(from decoder: any Decoder) throws {
            let name = try decoder.singleValueContainer().decode(String.self)
            guard let code = Code(rawValue: name) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "unknown error code \"\(name)\""))
            }
            self = code
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        /// Not a compact JWS; bad base64url; a header or payload that is not a JSON object; a duplicate member; invalid UTF-8; nesting too deep.
        @inlinable public static var malformed: Code { Code(index: 0) }
        /// Longer than the size limit; refused before any other work.
        @inlinable public static var tokenTooLarge: Code { Code(index: 1) }
        /// `alg` missing, `none`, HMAC, or not in the profile's list; or a key whose type does not fit the algorithm.
        @inlinable public static var algorithmNotAllowed: Code { Code(index: 2) }
        /// A `crit` header, or another header the profile forbids.
        @inlinable public static var unsupportedHeader: Code { Code(index: 3) }
        /// No `kid`, or a `kid` not in the key set after the permitted refresh.
        @inlinable public static var unknownKey: Code { Code(index: 4) }
        /// The signature does not verify, has the wrong length or is empty.
        @inlinable public static var badSignature: Code { Code(index: 5) }
        /// `exp` plus the leeway is not after the time of verification.
        @inlinable public static var expired: Code { Code(index: 6) }
        /// `nbf` minus the leeway is after the time of verification.
        @inlinable public static var notYetValid: Code { Code(index: 7) }
        /// `iat` or `auth_time` minus the leeway is after the time of verification.
        @inlinable public static var issuedInFuture: Code { Code(index: 8) }
        /// `iss` is not one the profile accepts.
        @inlinable public static var wrongIssuer: Code { Code(index: 9) }
        /// `aud` is not one the profile accepts.
        @inlinable public static var wrongAudience: Code { Code(index: 10) }
        /// A required claim is missing or has the wrong type or shape.
        @inlinable public static var invalidClaim: Code { Code(index: 11) }
        /// A nonce was expected and the token's `nonce` is missing or differs.
        @inlinable public static var nonceMismatch: Code { Code(index: 12) }
        /// The replay cache has already seen this token: it was presented before. Only that; a cache that could not
        /// say is ``replayStoreUnavailable``.
        @inlinable public static var replayed: Code { Code(index: 13) }
        /// A Firebase token from another tenant than the profile's.
        @inlinable public static var tenantMismatch: Code { Code(index: 14) }
        /// A Firebase token whose `sign_in_provider` the profile does not allow.
        @inlinable public static var providerNotAllowed: Code { Code(index: 15) }
        /// A Firebase token issued before the user's revocation time.
        @inlinable public static var revoked: Code { Code(index: 16) }
        /// The key source failed and has no usable keys: the server's problem, not the token's.
        @inlinable public static var keysUnavailable: Code { Code(index: 17) }
        /// A replay cache was asked and could not decide (Redis unreachable or slow, an in-memory cache full of live
        /// tokens, a cache that cannot answer synchronously): the server's problem, and the token was not judged.
        /// Never reported as ``replayed``.
        @inlinable public static var replayStoreUnavailable: Code { Code(index: 18) }
    }

    /// The stable code: what went wrong, for programs.
    public let code: Code
    /// The claim or header member concerned (`"exp"`, `"aud"`, `"alg"`…), when there is one.
    public let claim: String?
    private let makeMessage: @Sendable () -> String

    /// An error with `code`, the claim or header member concerned, and a message built only when read.
    public init(_ code: Code, claim: String? = nil, _ message: @escaping @autoclosure @Sendable () -> String) {
        self.code = code
        self.claim = claim
        self.makeMessage = message
    }

    /// A sentence a person can act on.
    public var message: String { makeMessage() }

    public var description: String {
        if let claim { return "\(code.rawValue) (\(claim)): \(message)" }
        return "\(code.rawValue): \(message)"
    }

    /// Errors are equal when their code and claim are; the wording of the message does not matter.
    public static func == (lhs: TokenError, rhs: TokenError) -> Bool {
        lhs.code == rhs.code && lhs.claim == rhs.claim
    }
}

extension TokenError {
    @inlinable static func malformed(_ message: @escaping @autoclosure @Sendable () -> String) -> TokenError {
        TokenError(.malformed, message())
    }
}
