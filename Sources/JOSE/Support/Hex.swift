/// Lowercase hexadecimal digits, for every writer of hex outside the digest fast path
/// (``SHA256/writeLowercaseHex(_:into:)``, four bytes at a time): replay-store keys and the `\u00XX` escapes of
/// JSON text.
package enum Hex {
    package static let digits: StaticString = "0123456789abcdef"

    /// The digit of the low four bits of `value`.
    @inline(__always)
    package static func digit(_ value: UInt8) -> UInt8 { digits.utf8Start[Int(value & 0x0F)] }

    /// Appends two digits a byte, high nibble first.
    package static func appendLowercase(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        for byte in bytes {
            out.append(digit(byte >> 4))
            out.append(digit(byte))
        }
    }
}
