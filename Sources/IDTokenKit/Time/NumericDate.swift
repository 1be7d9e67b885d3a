/// Reads NumericDate claims (`exp`, `nbf`, `iat`, `auth_time`): seconds since 1970-01-01T00:00:00Z.
///
/// A NumericDate must be a JSON number, integral or a finite fraction. Strings (even of digits), booleans and
/// `null` are refused, and so are dates no real token carries: negative ones and ones past the year 9999.
enum NumericDate {
    /// 9999-12-31T23:59:59Z.
    static let latest = UnixTime.latest

    /// The claim's value in seconds, nil when absent and not `required`. The number is read in place; the
    /// claim's name and value are looked at again only to explain a refusal.
    static func read(_ claims: JSONObject, _ key: JSONKey, required: Bool) throws(TokenError) -> Double? {
        let seconds: Double
        switch claims.number(key) {
        case .integer(let integer):
            seconds = Double(integer)
        case .real(let real):
            seconds = real
        case .missing:
            guard required else { return nil }
            let name = key.name
            throw TokenError(.invalidClaim, claim: name, "the required \"\(name)\" claim is missing")
        case .notANumber(let kind):
            let name = key.name
            if kind == .integer || kind == .real { throw absurd(name, claims[key]!) }
            throw TokenError(.invalidClaim, claim: name,
                             "the \"\(name)\" claim must be a NumericDate (a JSON number of seconds since 1970), not a \(kind): \(Quoted.value(claims[key]!))")
        }
        guard seconds >= 0, seconds <= latest else { throw absurd(key.name, claims[key]!) }
        return seconds
    }

    /// The claim's value in seconds when it is a valid NumericDate; nil when absent or not one (no error is made).
    @inline(__always)
    static func valid(_ claims: JSONObject, _ key: JSONKey) -> Double? {
        guard let seconds = claims.number(key).double else { return nil }
        return seconds >= 0 && seconds <= latest ? seconds : nil
    }

    static func absurd(_ name: String, _ value: JSONValue) -> TokenError {
        TokenError(.invalidClaim, claim: name,
                   "the \"\(name)\" claim \(Quoted.value(value)) is not a plausible date (it must lie between 1970 and the year 9999)")
    }
}
