/// Reading the token out of an `Authorization` header value (RFC 6750 §2.1), the other half of ``HTTPRefusal``
/// for HTTP services.
public enum BearerToken {
    /// The token of `Bearer <token>`: the scheme compared without regard to case, the spaces after it and at the
    /// end dropped; nil for another scheme, an empty token, or one with whitespace inside (a `b64token` has
    /// none, so such a value is no bearer credential: a missing token). Anything else in the token is left for
    /// the verifier to refuse with its code (`malformed`, …).
    ///
    /// Byte-wise: splitting the header into `Character`s, as a `String.split` does, costs more than the RSA
    /// verify of a 900-byte token (measured in a Vapor server: BENCHMARKS.md, "HTTP servers side by side").
    public static func token(inAuthorization value: String) -> String? {
        let utf8 = value.utf8
        guard utf8.count > 7 else { return nil }
        var index = utf8.startIndex
        for expected in "bearer ".utf8 {
            guard utf8[index] | 0x20 == expected else { return nil }
            index = utf8.index(after: index)
        }
        var end = utf8.endIndex
        while index < end, utf8[index] == UInt8(ascii: " ") { index = utf8.index(after: index) }
        while end > index, utf8[utf8.index(before: end)] == UInt8(ascii: " ") { end = utf8.index(before: end) }
        guard index < end else { return nil }
        var ascii = true
        for byte in utf8[index..<end] {
            if byte == 0x20 || (0x09...0x0D).contains(byte) { return nil }
            if byte >= 0x80 { ascii = false }
        }
        let token = String(value[index..<end])
        // Unicode whitespace (U+00A0, U+2028, …) only where there is non-ASCII text, which no JWS has.
        if !ascii, token.unicodeScalars.contains(where: \.properties.isWhitespace) { return nil }
        return token
    }
}
