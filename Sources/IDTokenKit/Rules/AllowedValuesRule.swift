/// A claim that must hold one of a list of values: Google's `hd` (the Workspace domain) and `azp` (the authorised
/// party), App Check's `sub` (the app ID), and the claims a profile requires of its own (`--require-claim`,
/// `"claims"`: a GitHub Actions token's `repository`, a token's `groups`).
public struct AllowedValuesRule: ClaimRule, Equatable {
    /// How the claim's value is compared with the accepted values.
    public enum Matching: Sendable, Equatable {
        /// The claim is a string equal to one of the values.
        case exact
        /// Each value is a pattern in which `*` matches any run of characters (`/` included) and every other
        /// character itself; the whole claim must match. A string claim matches a pattern; a boolean one the
        /// pattern `true` or `false`; an integer its decimal digits; an array when one of its strings matches.
        case patterns
    }

    /// The claim.
    public var name: String { didSet { key = JSONKey(name) } }
    /// The values accepted.
    public var values: [String] { didSet { patterns = values.map { Array($0.utf8) } } }
    /// Whether the token must carry the claim (`hd` when hosted domains are given), or only a claim it carries is
    /// checked (`azp`).
    public var required: Bool
    /// The code of a refusal for a value outside the list (``TokenError/Code/invalidClaim`` by default;
    /// ``TokenError/Code/wrongAudience`` for `azp`, which names an audience).
    public var code: TokenError.Code
    /// Advice appended to the refusal's message.
    public var hint: String
    /// How the values are compared.
    public var matching: Matching
    private var key: JSONKey
    /// The values' bytes, for ``Matching/patterns``.
    private var patterns: [[UInt8]]

    /// A rule accepting `claim` only when it is one of `values` (or, with ``Matching/patterns``, matches one).
    public init(_ name: String, oneOf values: [String], required: Bool, code: TokenError.Code = .invalidClaim, hint: String = "",
                matching: Matching = .exact) {
        self.name = name
        self.values = values
        self.required = required
        self.code = code
        self.hint = hint
        self.matching = matching
        self.key = JSONKey(name)
        self.patterns = values.map { Array($0.utf8) }
    }

    public var dependsOnlyOnClaims: Bool { true }

    public func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        if matching == .exact, claims.string(key, isOneOf: values) == true { return }
        let suffix = hint.isEmpty ? "" : ". " + hint
        guard let value = claims[key] else {
            guard required else { return }
            throw TokenError(.invalidClaim, claim: name,
                             "the \(context.tokenName) has no \"\(name)\" claim; \(AudienceRule.list(values)) is required\(suffix)")
        }
        switch matching {
        case .exact:
            guard value.kind == .string else {
                throw TokenError(.invalidClaim, claim: name, "the \"\(name)\" claim must be a string, not a \(value.kind)")
            }
        case .patterns:
            switch value.kind {
            case .string:
                if matches(value) { return }
            case .true, .false:
                if values.contains(value.kind == .true ? "true" : "false") { return }
            case .integer:
                if let number = value.int64, values.contains(String(number)) { return }
            case .array:
                let elements = value.array ?? []
                guard elements.allSatisfy({ $0.kind == .string }) else {
                    throw TokenError(.invalidClaim, claim: name, "the \"\(name)\" claim must be an array of strings, not \(Quoted.value(value))")
                }
                if elements.contains(where: matches) { return }
            default:
                throw TokenError(.invalidClaim, claim: name,
                                 "the \"\(name)\" claim must be a string, a boolean, an integer or an array of strings, not a \(value.kind)")
            }
        }
        throw TokenError(code, claim: name,
                         "the \(context.tokenName) has \"\(name)\" \(Quoted.value(value)), but only \(AudienceRule.list(values)) is accepted\(suffix)")
    }

    /// Whether the string `value` matches one of the patterns.
    private func matches(_ value: JSONValue) -> Bool {
        value.withStringBytes { text in patterns.contains { Self.matches(text, pattern: $0) } } ?? false
    }

    /// Whether all of `text` matches `pattern`, in which `*` matches any run of bytes: the greedy scan that returns
    /// to the last `*` on a mismatch (no recursion; at most pattern × text steps).
    static func matches(_ text: some RandomAccessCollection<UInt8>, pattern: [UInt8]) -> Bool {
        let star = UInt8(ascii: "*")
        var p = 0, t = text.startIndex
        var lastStar: Int?, resume = text.startIndex
        while t != text.endIndex {
            if p < pattern.count && pattern[p] == star {
                lastStar = p
                p += 1
                resume = t
            } else if p < pattern.count && pattern[p] == text[t] {
                p += 1
                t = text.index(after: t)
            } else if let starAt = lastStar {
                p = starAt + 1
                resume = text.index(after: resume)
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == star { p += 1 }
        return p == pattern.count
    }
}
