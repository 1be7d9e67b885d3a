/// Reads NumericDate claims (`exp`, `nbf`, `iat`, `auth_time`): seconds since 1970-01-01T00:00:00Z.
///
/// A NumericDate must be a JSON number, integral or a finite fraction. Strings (even of digits), booleans and
/// `null` are refused, and so are dates no real token carries: negative ones and ones past the year 9999.
enum NumericDate {
    /// 9999-12-31T23:59:59Z.
    static let latest: Double = 253_402_300_799

    /// The claim's value in seconds, nil when absent and not `required`.
    static func read(_ claims: JSONObject, _ key: JSONKey, required: Bool) throws(TokenError) -> Double? {
        guard let value = claims[key] else {
            let name = key.name
            if required {
                throw TokenError(.invalidClaim, claim: name, "the required \"\(name)\" claim is missing")
            }
            return nil
        }
        let name = key.name
        let seconds: Double
        switch value.kind {
        case .integer:
            guard let integer = value.int64 else { throw absurd(name, value) }
            seconds = Double(integer)
        case .real:
            guard let real = value.double, real.isFinite else { throw absurd(name, value) }
            seconds = real
        default:
            throw TokenError(.invalidClaim, claim: name,
                             "the \"\(name)\" claim must be a NumericDate (a JSON number of seconds since 1970), not a \(value.kind): \(Quoted.value(value))")
        }
        guard seconds >= 0, seconds <= latest else { throw absurd(name, value) }
        return seconds
    }

    static func absurd(_ name: String, _ value: JSONValue) -> TokenError {
        TokenError(.invalidClaim, claim: name,
                   "the \"\(name)\" claim \(Quoted.value(value)) is not a plausible date (it must lie between 1970 and the year 9999)")
    }
}
