/// The kind as people say it ("string", "number"…), for messages about a claim of the wrong type.
extension JSONKind: CustomStringConvertible {
    public var description: String {
        switch self {
        case .object: return "object"
        case .array: return "array"
        case .string: return "string"
        case .integer, .real: return "number"
        case .true, .false: return "boolean"
        case .null: return "null"
        }
    }
}
