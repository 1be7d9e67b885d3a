/// Lowercase hexadecimal digits, for every writer of hex: digests (``SHA256/writeLowercaseHex(_:into:)``, which
/// converts four bytes at a time and uses these digits for the rest), replay-store keys and the `\u00XX` escapes
/// of JSON text.
@usableFromInline
package enum Hex {
    /// The digit of the low four bits of `value`. The table is a literal in the function, not a global, so the
    /// digest fast path that inlines it pays no lazy-initialisation check.
    @inlinable @inline(__always)
    package static func digit(_ value: UInt8) -> UInt8 {
        let digits: StaticString = "0123456789abcdef"
        return digits.utf8Start[Int(value & 0x0F)]
    }

    /// Appends two digits a byte, high nibble first.
    package static func appendLowercase(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        for byte in bytes {
            out.append(digit(byte >> 4))
            out.append(digit(byte))
        }
    }
}
