/// A set of ``JWSAlgorithm``s as a bit mask, for the policy check made on every token: membership is a shift
/// and an AND, where `Set<JWSAlgorithm>.contains` hashes the algorithm's name.
public struct JWSAlgorithmMask: Sendable, Equatable {
    @usableFromInline let bits: UInt16

    /// The mask holding `algorithms`.
    public init<S: Sequence>(_ algorithms: S) where S.Element == JWSAlgorithm {
        var bits: UInt16 = 0
        for algorithm in algorithms { bits |= JWSAlgorithmMask.bit(algorithm) }
        self.bits = bits
    }

    /// Whether `algorithm` is in the mask.
    @inlinable
    public func contains(_ algorithm: JWSAlgorithm) -> Bool { bits & JWSAlgorithmMask.bit(algorithm) != 0 }

    /// The algorithms in the mask.
    public var algorithms: Set<JWSAlgorithm> { Set(JWSAlgorithm.allCases.filter(contains)) }

    @inlinable
    static func bit(_ algorithm: JWSAlgorithm) -> UInt16 {
        switch algorithm {
        case .rs256: return 1 << 0
        case .rs384: return 1 << 1
        case .rs512: return 1 << 2
        case .ps256: return 1 << 3
        case .ps384: return 1 << 4
        case .ps512: return 1 << 5
        case .es256: return 1 << 6
        case .es384: return 1 << 7
        }
    }
}
