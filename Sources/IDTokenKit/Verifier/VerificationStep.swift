/// How far a token got without waiting: decided, or waiting for a key source or an asynchronous replay cache. The
/// one shape of a token in flight, for ``IDTokenVerifier`` (its outcome) and ``MultiProfileVerifier`` (a
/// ``ProfileVerification``).
package enum VerificationStep<Value: Sendable>: Sendable {
    case done(Value)
    /// `without` is the answer when waiting is not possible (a synchronous caller): `keys_unavailable`, the
    /// `unknown_key` of the set at hand, or the replay cache's refusal to answer synchronously.
    case waiting(without: Value, @Sendable () async -> Value)

    /// The answer now: the decision, or the answer without waiting.
    @inline(__always)
    package consuming func now() -> Value {
        switch consume self {
        case .done(let value), .waiting(let value, _): return value
        }
    }

    /// The answer, waiting for it when it must.
    @inline(__always)
    package consuming func value() async -> Value {
        switch consume self {
        case .done(let value): return value
        case .waiting(_, let rest): return await rest()
        }
    }
}

/// Where the way up to a token's signature left it: decided without its signature (refused before it, or waiting
/// for the key source), or waiting only for its signature's verdict, as `Pending`.
package enum PreparedToken<Pending: Sendable, Value: Sendable>: Sendable {
    case decided(VerificationStep<Value>)
    case signature(Pending)
}
