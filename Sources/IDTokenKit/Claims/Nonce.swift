/// The nonce a verification expects in the token's `nonce` claim (DESIGN §6), and how the token carries it.
///
/// Sign in with Apple and Facebook Limited Login echo what the app sent; the Firebase guides for both have the
/// app send the SHA-256 of a raw random nonce, in lowercase hex, and keep the raw value for the backend. A
/// profile says how its provider carries the nonce (``Profile/nonceMode``); give the verifier the raw nonce the
/// backend kept and it compares it the profile's way:
///
/// ```swift
/// let nonce = try Nonce.generate()            // app side: send nonce.sha256Hex, keep nonce.raw
/// let token = try await verifier.verify(idToken, now: .now, nonce: Nonce(nonce.raw))
/// ```
///
/// ``sha256Hex(_:)`` and ``exact(_:)`` choose the mode whatever the profile says (the command line's `--nonce`
/// and `--nonce-exact`). The comparison runs in time independent of where the values differ.
public struct Nonce: Sendable, Equatable {
    /// How a token carries the nonce the app sent.
    public enum Mode: String, Sendable, Equatable {
        /// The token holds the lowercase hex SHA-256 of the raw nonce.
        case sha256Hex
        /// The token holds the nonce as sent.
        case exact
    }

    /// The raw nonce (``Mode/sha256Hex``) or the claim's exact value (``Mode/exact``).
    public let value: String
    /// How the token carries it; nil: as the verifier's profile says (``Profile/nonceMode``), exactly when the
    /// profile says nothing.
    public let mode: Mode?

    /// The nonce `value`, carried as `mode` says, or as the verifier's profile says when `mode` is nil.
    public init(_ value: String, mode: Mode? = nil) {
        self.value = value
        self.mode = mode
    }

    /// The token carries the lowercase hex SHA-256 of this raw nonce.
    public static func sha256Hex(_ raw: String) -> Nonce { Nonce(raw, mode: .sha256Hex) }

    /// The token carries exactly this value.
    public static func exact(_ value: String) -> Nonce { Nonce(value, mode: .exact) }

    /// This nonce with its mode settled: its own, else `profileMode`, else exact.
    public func resolved(_ profileMode: Mode?) -> Nonce {
        mode != nil ? self : Nonce(value, mode: profileMode ?? .exact)
    }

    /// The value the token's `nonce` claim must equal (a nonce without a mode is compared exactly).
    public var expectedClaimValue: String {
        mode == .sha256Hex ? SHA256.hexDigest(utf8: value) : value
    }

    /// Whether the token's `nonce` value is the expected one, compared in constant time.
    public func matches(_ value: JSONValue) -> Bool {
        value.withStringBytes(matches) ?? false
    }

    /// Whether a claim whose decoded string is `actual` matches. The expected value is built on the stack and
    /// the strings lent in place: no allocation, no copy.
    func matches(_ actual: UnsafeBufferPointer<UInt8>) -> Bool {
        switch mode {
        case .sha256Hex?:
            let raw = value
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64 + SHA256.byteCount) { buffer in
                let hex = UnsafeMutableBufferPointer(rebasing: buffer[..<64])
                let digest = UnsafeMutableBufferPointer(rebasing: buffer[64...])
                raw.withBorrowedUTF8 { SHA256.hash(UnsafeRawBufferPointer($0), into: UnsafeMutableRawBufferPointer(digest)) }
                SHA256.writeLowercaseHex(UnsafeRawBufferPointer(digest), into: UnsafeMutableRawBufferPointer(hex))
                return ConstantTime.equals(actual, UnsafeBufferPointer(hex))
            }
        case .exact?, nil:
            return value.withBorrowedUTF8 { ConstantTime.equals(actual, $0) }
        }
    }

    /// Checks the `nonce` claim of `claims` (`nonce_mismatch` when missing or different).
    func check(_ claims: JSONObject, tokenName: String) throws(TokenError) {
        // A string claim that matches is answered in place; the rest reads the claim as a value to explain.
        if claims.withString(ClaimKey.nonce, matches) == true { return }
        guard let value = claims[ClaimKey.nonce] else {
            throw TokenError(.nonceMismatch, claim: "nonce",
                             "a nonce was expected but the \(tokenName) has no \"nonce\" claim: the app must send the nonce when it signs the user in")
        }
        guard matches(value) else {
            let hint: String
            switch mode {
            case .sha256Hex?: hint = "the token must carry the lowercase hex SHA-256 of the raw nonce the app generated; check that the app sent the hash and the backend was given the raw value"
            case .exact?, nil: hint = "the token must carry exactly the nonce the app sent"
            }
            throw TokenError(.nonceMismatch, claim: "nonce", "the \(tokenName)'s \"nonce\" claim does not match the expected nonce: \(hint)")
        }
    }

    // MARK: Generating

    /// A fresh random nonce: ``raw`` for the backend to keep, ``sha256Hex`` for the app to send.
    public struct Generated: Sendable, Equatable {
        /// Characters of the base64url alphabet (`A–Z a–z 0–9 - _`), each chosen uniformly at random.
        public let raw: String
        /// The lowercase hex SHA-256 of ``raw``'s UTF-8 bytes.
        public let sha256Hex: String
    }

    /// The shortest and longest nonces ``generate(length:)`` makes.
    public static let lengthRange = 16...512

    /// A random nonce of `length` base64url characters (default 32, i.e. 192 bits).
    ///
    /// Each character takes the low 6 bits of one byte from libcrypto's DRBG; 64 divides 256, so every character
    /// is exactly uniform (no modulo bias).
    public static func generate(length: Int = 32) throws(ConfigurationError) -> Generated {
        guard lengthRange.contains(length) else {
            throw ConfigurationError("a nonce must be \(lengthRange.lowerBound) to \(lengthRange.upperBound) characters long, not \(length)")
        }
        let bytes: [UInt8]
        do { bytes = try SecureRandom.bytes(length) } catch {
            throw ConfigurationError("\(error)")
        }
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        let characters = alphabet.withUTF8Buffer { table in bytes.map { table[Int($0 & 63)] } }
        let raw = String(decoding: characters, as: UTF8.self)
        return Generated(raw: raw, sha256Hex: SHA256.hexDigest(utf8: raw))
    }
}

/// How a provider carries the nonce the app sent: ``Nonce/Mode``, by the name profiles use for it.
public typealias NonceMode = Nonce.Mode
