import JOSE

extension JSONTree {
    /// The tree written back as compact JSON text, for feeding a vector's embedded JWK or JWKS to an API that
    /// takes bytes (``JWKSet/parse(_:)``).
    var jsonText: String {
        switch self {
        case .object(let members):
            return "{" + members.map { JSONTree.quote($0.key) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
        case .array(let elements):
            return "[" + elements.map(\.jsonText).joined(separator: ",") + "]"
        case .string(let s): return JSONTree.quote(s)
        case .integer(let i): return String(i)
        case .real(let d): return "\(d)"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
