/// A profile or verifier that cannot be used as configured: an empty project ID, no audience, a leeway
/// outside 0–300 seconds. Raised when the verifier is built, never while verifying a token.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What is wrong with the configuration and how to fix it.
    public let reason: String
    /// An error with `reason`.
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
