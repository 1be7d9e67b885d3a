/// Why an input could not be had: a key set fetched or loaded (``KeyFetchError``), a log the audit reads. One shape
/// for every such error: a stable kind for programs and logs, and a message for people.
///
/// `K` is an enum with string raw values, the stable names (`timed_out`, `corrupt_gzip`); each use names its own,
/// reachable as the error's ``Kind`` (`KeyFetchError.Kind.timedOut`).
public struct InputError<K>: Error, Sendable, Equatable, CustomStringConvertible
where K: RawRepresentable & Hashable & Sendable, K.RawValue == String {
    /// The kinds of failure of this input (a generic parameter is not visible as a member type; this alias is).
    public typealias Kind = K

    /// What kind of failure: the stable part, for programs and logs.
    public let kind: Kind
    /// What happened and what to fix, for people.
    public let message: String

    /// An error of `kind` with `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
