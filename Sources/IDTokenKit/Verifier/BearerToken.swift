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
        // Letters compared with bit 5 set (only `B`/`b` give `b`, …); the space exactly (a NUL with bit 5 set
        // would be one).
        for expected in "bearer".utf8 {
            guard utf8[index] | 0x20 == expected else { return nil }
            index = utf8.index(after: index)
        }
        guard utf8[index] == UInt8(ascii: " ") else { return nil }
        var end = utf8.endIndex
        while index < end, utf8[index] == UInt8(ascii: " ") { index = utf8.index(after: index) }
        while end > index, utf8[utf8.index(before: end)] == UInt8(ascii: " ") { end = utf8.index(before: end) }
        guard index < end else { return nil }
        let token = String(value[index..<end])
        // On the token's bytes in place: iterating a `String.UTF8View` byte by byte costs several times more.
        var ascii = true
        let inner: Bool? = token.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes {
                if byte == 0x20 || (0x09...0x0D).contains(byte) { return true }
                if byte >= 0x80 { ascii = false }
            }
            return false
        }
        if inner ?? token.utf8.contains(where: { $0 == 0x20 || (0x09...0x0D).contains($0) }) { return nil }
        if inner == nil { ascii = token.utf8.allSatisfy { $0 < 0x80 } }
        // Unicode whitespace (U+00A0, U+2028, …) only where there is non-ASCII text, which no JWS has.
        if !ascii, token.unicodeScalars.contains(where: \.properties.isWhitespace) { return nil }
        return token
    }
}
