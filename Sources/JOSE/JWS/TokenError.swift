/// The one error every verification failure is reported as.
///
/// The ``Code`` is the stable part of the contract: libraries, the `idtoken` tool's JSON and audit reports all
/// carry it, and tests compare it. The message is for people and may change wording between releases; it is
/// built lazily so that rejecting a token costs no string formatting unless somebody reads the message.
public struct TokenError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Stable error codes (DESIGN §3). The raw value is what appears in JSON output.
    public enum Code: String, Sendable, CaseIterable, Codable {
        case malformed
        case tokenTooLarge = "token_too_large"
        case algorithmNotAllowed = "algorithm_not_allowed"
        case unsupportedHeader = "unsupported_header"
        case unknownKey = "unknown_key"
        case badSignature = "bad_signature"
        case expired
        case notYetValid = "not_yet_valid"
        case issuedInFuture = "issued_in_future"
        case wrongIssuer = "wrong_issuer"
        case wrongAudience = "wrong_audience"
        case invalidClaim = "invalid_claim"
        case nonceMismatch = "nonce_mismatch"
        case replayed
        case tenantMismatch = "tenant_mismatch"
        case providerNotAllowed = "provider_not_allowed"
        case revoked
        case keysUnavailable = "keys_unavailable"
    }

    public let code: Code
    /// The claim or header member concerned (`"exp"`, `"aud"`, `"alg"`…), when there is one.
    public let claim: String?
    private let makeMessage: @Sendable () -> String

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
