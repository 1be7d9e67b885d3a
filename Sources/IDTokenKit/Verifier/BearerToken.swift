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
        // On the value's bytes in place (a native string's are contiguous): iterating a `String.UTF8View` byte by
        // byte costs several times more, and a token is about a kilobyte.
        var value = value
        var found: Range<Int>?
        let text = value.withUTF8 { bytes -> String? in
            guard let bounds = credentialBounds(UnsafeRawBufferPointer(bytes)) else { return nil }
            let token = UnsafeBufferPointer(rebasing: bytes[bounds])
            // A JWS is visible ASCII, checked sixteen bytes at a time: the usual case, whose text is copied from the
            // header's below (valid UTF-8 already, so not checked again).
            if ByteSearch.allASCII(UnsafeRawBufferPointer(token), from: 0x21) {
                found = bounds
                return nil
            }
            var ascii = true
            for byte in token {
                if byte == 0x20 || (0x09...0x0D).contains(byte) { return nil }
                if byte >= 0x80 { ascii = false }
            }
            let text = String(decoding: token, as: UTF8.self)
            // Unicode whitespace (U+00A0, U+2028, …) only where there is non-ASCII text, which no JWS has.
            if !ascii, text.unicodeScalars.contains(where: \.properties.isWhitespace) { return nil }
            return text
        }
        guard let found else { return text }
        let utf8 = value.utf8
        return String(value[utf8.index(utf8.startIndex, offsetBy: found.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: found.upperBound)])
    }

    /// Where the token is in an `Authorization` value of the form every client sends, `Bearer`, spaces, and a token
    /// of visible ASCII (spaces after it allowed): its bytes are then exactly what ``token(inAuthorization:)``
    /// returns. Nil for any other value, which ``token(inAuthorization:)`` decides on: another scheme, no token, a
    /// token with whitespace inside or with bytes that are not visible ASCII.
    ///
    /// For a door reading the value from the bytes it received (an HTTP request's head, an `ext_authz` CheckRequest),
    /// so that the value is not made a `String` only to be cut down to the token's.
    /// - Parameters:
    ///   - range: where the value is in `bytes`; the token's range is returned in `bytes` too.
    ///   - printable: every byte of the value is already known to be printable ASCII (0x20 to 0x7E), as a parser
    ///     that has scanned the header line knows: then only a space inside the token is looked for.
    package static func visibleToken(inAuthorization range: Range<Int>, of bytes: UnsafeRawBufferPointer,
                                     printable: Bool) -> Range<Int>? {
        visibleToken(inAuthorization: UnsafeRawBufferPointer(rebasing: bytes[range]), printable: printable)
            .map { range.lowerBound + $0.lowerBound..<range.lowerBound + $0.upperBound }
    }

    /// The same within the value itself.
    private static func visibleToken(inAuthorization value: UnsafeRawBufferPointer, printable: Bool) -> Range<Int>? {
        guard let bounds = credentialBounds(value), let base = value.baseAddress else { return nil }
        if printable {
            let bytes = base.assumingMemoryBound(to: UInt8.self)
            return ByteSearch.firstIndex(of: UInt8(ascii: " "), in: bytes, from: bounds.lowerBound, to: bounds.upperBound) == nil
                ? bounds : nil
        }
        return ByteSearch.allASCII(UnsafeRawBufferPointer(rebasing: value[bounds]), from: 0x21) ? bounds : nil
    }

    /// The bounds of what follows the `Bearer` scheme (compared without regard to case) and the spaces after it,
    /// the spaces at the end dropped; nil for another scheme or nothing after it.
    private static func credentialBounds(_ bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        guard bytes.count > 7 else { return nil }
        // Letters compared with bit 5 set (only `B`/`b` give `b`, …); the space exactly (a NUL with bit 5 set
        // would be one).
        guard bytes[0] | 0x20 == UInt8(ascii: "b"), bytes[1] | 0x20 == UInt8(ascii: "e"), bytes[2] | 0x20 == UInt8(ascii: "a"),
              bytes[3] | 0x20 == UInt8(ascii: "r"), bytes[4] | 0x20 == UInt8(ascii: "e"), bytes[5] | 0x20 == UInt8(ascii: "r") else {
            return nil
        }
        guard bytes[6] == UInt8(ascii: " ") else { return nil }
        var start = 7, end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") { end -= 1 }
        return start < end ? start..<end : nil
    }
}
