/// Bounds on one key-set download, so that a slow or hostile endpoint cannot hold a refresh or memory.
public struct KeyFetchLimits: Sendable, Equatable {
    /// Time allowed to open the connection (TCP and TLS).
    public var connectTimeout: Duration = .seconds(5)
    /// Time allowed for the whole request, from sending it to the last byte of the body.
    public var totalTimeout: Duration = .seconds(15)
    /// The largest body accepted. Real key sets are a few KiB; a larger body is cut off as it streams in,
    /// never buffered whole.
    public var maximumBodyBytes: Int = 1 << 20

    /// The default limits: 5 s to connect, 15 s in all, responses up to 1 MiB.
    public init() {}

    /// Limits with the given timeouts and largest response.
    public init(connectTimeout: Duration = .seconds(5), totalTimeout: Duration = .seconds(15),
                maximumBodyBytes: Int = 1 << 20) {
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maximumBodyBytes = maximumBodyBytes
    }
}
