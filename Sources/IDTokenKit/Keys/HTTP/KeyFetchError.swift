/// Why a key set could not be fetched or loaded. The verifier sees these as `keys_unavailable`; the text
/// says what to fix.
public typealias KeyFetchError = InputError<KeyFetchErrorKind>

/// What kind of key fetch or load failure (``KeyFetchError``'s `Kind`): the stable part, for programs and logs.
public enum KeyFetchErrorKind: String, Sendable, Equatable {
    /// The URL is not `https` (and not a loopback address), or cannot be parsed.
    case insecureURL = "insecure_url"
    /// The server answered with a status other than 200.
    case httpStatus = "http_status"
    /// The body exceeded ``KeyFetchLimits/maximumBodyBytes``.
    case tooLarge = "too_large"
    /// The connection or the whole request took longer than allowed.
    case timedOut = "timed_out"
    /// The connection failed or was dropped.
    case transport = "transport"
    /// The body is not a JWKS, JWK or kid → certificate map.
    case malformed = "malformed"
    /// The document parsed but holds no key this library can use.
    case noUsableKeys = "no_usable_keys"
    /// A local file or directory could not be read or written.
    case file = "file"
    /// The source was shut down.
    case shutDown = "shut_down"
}

extension KeyFetchError {
    /// The verifier's view of this failure.
    public var tokenError: TokenError {
        let text = message
        return TokenError(.keysUnavailable, "keys unavailable: \(text)")
    }
}
