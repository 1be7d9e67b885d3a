import JOSE

/// A token as a door holds it: its text (`String`), or bytes of the caller's input (``TokenBytes``), which batch
/// work such as the audit verifies without making a `String` of each token. ``MultiProfileVerifier`` takes either
/// the same way: it splits the token from what it is, looks it up in a verified-token cache by its bytes, and makes
/// its text only for what needs one (a token stored in the cache, the report of a token that cannot be split).
package protocol TokenText {
    /// The token split and checked for shape (``CompactJWS``), under `limits`.
    func split(limits: JWSLimits) throws(TokenError) -> CompactJWS
    /// The token's text.
    var text: String { get }
    /// Calls `body` with the token's UTF-8 bytes, lent for the call.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R
}

extension String: TokenText {
    @inline(__always)
    package func split(limits: JWSLimits) throws(TokenError) -> CompactJWS { try CompactJWS(self, limits: limits) }
    @inline(__always)
    package var text: String { self }
    @inline(__always)
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withBorrowedUTF8 { body(UnsafeRawBufferPointer($0)) } }
}

/// A token's bytes, lent by the caller for the length of one call: the split keeps a copy of them.
package struct TokenBytes: TokenText {
    package let bytes: UnsafeRawBufferPointer

    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    @inline(__always)
    package func split(limits: JWSLimits) throws(TokenError) -> CompactJWS { try CompactJWS(bytes: bytes, limits: limits) }
    package var text: String { String(decoding: bytes, as: UTF8.self) }
    @inline(__always)
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { body(bytes) }
}
