/// Limits applied before and while a token is read.
public struct JWSLimits: Sendable, Equatable {
    /// Tokens longer than this (in bytes) are refused before any other work.
    public var maxTokenBytes: Int
    /// The deepest nesting accepted in the header or the claims (never more than ``JSONObject/depthCeiling``).
    public var maxDepth: Int

    /// Limits of `maxTokenBytes` bytes per token (16 KiB by default) and `maxDepth` levels of nesting.
    public init(maxTokenBytes: Int = 16 * 1024, maxDepth: Int = JSONObject.defaultMaxDepth) {
        self.maxTokenBytes = maxTokenBytes
        self.maxDepth = maxDepth
    }

    /// 16 KiB per token, nesting as deep as ``JSONObject/defaultMaxDepth``.
    public static let `default` = JWSLimits()
}
