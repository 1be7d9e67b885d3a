/// How far the clock may disagree with the token's issuer: every time check (DESIGN §2) is widened by it.
///
/// The default is 60 seconds; a profile accepts 0 to 300 seconds (``allowedRange``). The value is checked when
/// a verifier is built, so a verification never sees an out-of-range leeway.
public struct Leeway: Sendable, Hashable, CustomStringConvertible {
    /// The leeway in whole seconds.
    public let seconds: Int

    /// A leeway of `seconds`; ``Profile/validate()`` refuses values outside 0–300.
    public init(seconds: Int) { self.seconds = seconds }

    /// The leeways a profile accepts.
    public static let allowedRange = 0...300

    /// 60 seconds.
    public static let `default` = Leeway(seconds: 60)

    /// No slack at all.
    public static let zero = Leeway(seconds: 0)

    public var description: String { "\(seconds) s" }
}
