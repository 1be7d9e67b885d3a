import JOSE

/// Header bytes eight at a time: the request parser looks for the end of a line and for control characters in
/// it, and every value the service writes is checked to be printable ASCII. Most words hold neither, so a word
/// is tested at once and only a word that might hold one is looked at byte by byte.
enum HeaderBytes {
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether `word` may hold a byte below 0x20 (a control character, CR and LF included) or DEL (0x7F). Never
    /// false when it does; rarely true when it does not (a borrow between bytes), and the caller then looks at the
    /// bytes one by one.
    @inline(__always)
    static func mayHoldControl(_ word: UInt64) -> Bool {
        let below = (word &- 0x2020_2020_2020_2020) & ~word & highs
        let flipped = word ^ 0x7F7F_7F7F_7F7F_7F7F
        let del = (flipped &- 0x0101_0101_0101_0101) & ~flipped & highs
        return below | del != 0
    }

    /// Whether `byte` is an RFC 9110 §5.6.2 `tchar`: what a method, a header name or a cookie name may hold. A bit
    /// of two constant words (`tchars`), so that a header name's bytes are checked without loading a table (a
    /// lazily made global checks that it is made on every access).
    @inline(__always)
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        let word = byte < 64 ? tchars.low : byte < 128 ? tchars.high : 0
        return (word >> UInt64(byte & 63)) & 1 != 0
    }

    /// The `tchar`s as bits: bytes 0–63 in `low`, 64–127 in `high`. Digits, letters and ``!#$%&'*+-.^_`|~``.
    static let tchars: (low: UInt64, high: UInt64) = (0x03FF_6CFA_0000_0000, 0x57FF_FFFF_C7FF_FFFE)

    /// Whether every byte is printable ASCII (0x20 to 0x7E).
    static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        ByteSearch.allASCII(UnsafeRawBufferPointer(bytes), from: 0x20)
    }
}
