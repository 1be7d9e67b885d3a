import JOSE

/// How claim text becomes an identity header value. Claims such as `email` are chosen by the end user, so they
/// are hostile text: nothing in them may end a header, start another, or be read back as something else.
///
/// The rule (stated in docs/serve.md):
/// - **Encoding**: bytes from `!` to `~` and the space pass through, except `%` and `,`; every other byte of the
///   value's UTF-8 — control characters (CR, LF, NUL, TAB…), DEL, every byte of a non-ASCII character — and `%`
///   and `,` are written as `%XX` (upper-case hex), as in RFC 3986 percent-encoding and RFC 8187's
///   `value-chars`. Decoding is `%XX` → byte, then UTF-8. `,` is encoded so that `X-Auth-Audience`, a list, can
///   join its items with `,`.
/// - **Length**: identifiers (subject, issuer, audience, email) are never cut, since a cut identifier could be
///   another user's: a value whose encoding is longer than the limit refuses the request (`invalid_claim`, the
///   claim named). `X-Auth-Claims` (the payload, base64url as the token carries it) longer than its limit is
///   left out, and `X-Auth-Claims-Omitted: too-large` says so.
package enum IdentityHeaders {
    /// The value encoded by the rule above (a value that passes as it is is returned as it is, not copied).
    package static func encode(_ text: String) -> String {
        if let encoded = text.utf8.withContiguousStorageIfAvailable({ passesAll($0) ? text : percentEncoded($0) }) {
            return encoded
        }
        return Array(text.utf8).withUnsafeBufferPointer { passesAll($0) ? text : percentEncoded($0) }
    }

    /// The value of these UTF-8 bytes (a claim's string, decoded) encoded by the rule above: read in one pass, and
    /// made into a string once, without a string of the claim on the way.
    package static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        passesAll(bytes) ? String(decoding: bytes, as: UTF8.self) : percentEncoded(bytes)
    }

    /// Writes the value of these UTF-8 bytes encoded by the rule above at `out`, which has room for three bytes a
    /// byte; returns the encoding's length. Copied as they are when every byte passes (most identifiers). For answers
    /// laid out as bytes (``IdentityAnswer``).
    static func write(_ bytes: UnsafeBufferPointer<UInt8>, encodedTo out: UnsafeMutablePointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        if passesAll(bytes) {
            out.update(from: base, count: bytes.count)
            return bytes.count
        }
        var at = 0
        for byte in bytes {
            if passes(byte) {
                out[at] = byte
                at += 1
            } else {
                out[at] = UInt8(ascii: "%")
                out[at + 1] = hexDigits[Int(byte >> 4)]
                out[at + 2] = hexDigits[Int(byte & 0x0F)]
                at += 3
            }
        }
        return at
    }

    /// Every byte that does not pass written as `%XX`.
    private static func percentEncoded(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: 3 * bytes.count) { write(bytes, encodedTo: $0.baseAddress!) }
    }

    /// Several values (an audience list) encoded and joined by `,`.
    package static func encodeList(_ items: [String]) -> String {
        items.map(encode).joined(separator: ",")
    }

    /// Whether `value` may be sent as it is: no byte outside `0x20…0x7E`. Every header this service writes is
    /// checked with it before it is written, as a last guard.
    package static func isSafe(_ value: String) -> Bool {
        // On the bytes in place (a native string's are contiguous): iterating `String.UTF8View` costs several
        // times more, and `X-Auth-Claims` is most of a response.
        value.utf8.withContiguousStorageIfAvailable(HeaderBytes.isPrintableASCII) ?? value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// Whether every byte passes as it is: printable ASCII (sixteen bytes a vector compare), then no `%` or `,`
    /// (`memchr`); most identifiers are plain text.
    static func passesAll(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        return ByteSearch.firstIndex(outside: 0x20, 0x7E, in: UnsafeRawBufferPointer(bytes), from: 0) == bytes.count
            && ByteSearch.firstIndex(of: UInt8(ascii: "%"), in: base, from: 0, to: bytes.count) == nil
            && ByteSearch.firstIndex(of: UInt8(ascii: ","), in: base, from: 0, to: bytes.count) == nil
    }

    @inline(__always)
    static func passes(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") && byte != UInt8(ascii: ",")
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}
