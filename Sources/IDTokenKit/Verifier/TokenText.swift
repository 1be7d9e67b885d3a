import JOSE

/// A token as a door holds it: its text (`String`), or bytes of the caller's input (``TokenBytes``), which batch
/// work such as the audit verifies without making a `String` of each token. ``MultiProfileVerifier`` takes either
/// the same way: it splits the token from what it is, and makes its text only for what needs one (a verified-token
/// cache, the report of a token that cannot be split).
package protocol TokenText {
    /// The token split and checked for shape (``CompactJWS``), under `limits`.
    func split(limits: JWSLimits) throws(TokenError) -> CompactJWS
    /// The token's text.
    var text: String { get }
}

extension String: TokenText {
    @inline(__always)
    package func split(limits: JWSLimits) throws(TokenError) -> CompactJWS { try CompactJWS(self, limits: limits) }
    @inline(__always)
    package var text: String { self }
}

/// A token's bytes, lent by the caller for the length of one call: the split keeps a copy of them.
package struct TokenBytes: TokenText {
    package let bytes: UnsafeRawBufferPointer

    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    @inline(__always)
    package func split(limits: JWSLimits) throws(TokenError) -> CompactJWS { try CompactJWS(bytes: bytes, limits: limits) }
    package var text: String { String(decoding: bytes, as: UTF8.self) }
}
