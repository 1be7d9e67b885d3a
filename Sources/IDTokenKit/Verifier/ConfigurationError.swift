/// A profile or verifier that cannot be used as configured: an empty project ID, no audience, a leeway
/// outside 0–300 seconds. Raised when the verifier is built, never while verifying a token.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
