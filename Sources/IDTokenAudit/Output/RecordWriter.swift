import IDTokenKit
import JOSE

/// Writes one output record through a pointer into room reserved at the end of a byte array: each piece is a
/// bounds-free copy, where `Array.append(contentsOf:)` checks capacity and uniqueness on every call (a record
/// is some thirty pieces).
///
/// ``write(into:bound:_:)`` lets `body` write at most `bound` bytes at the array's end (`appendWriting(atMost:_:)`).
/// The caller works the bound out from the lengths of what it writes.
struct RecordWriter {
    private(set) var position: UnsafeMutablePointer<UInt8>

    static func write(into out: inout [UInt8], bound: Int, _ body: (inout RecordWriter) -> Void) {
        out.appendWriting(atMost: bound) { base in
            var writer = RecordWriter(position: base)
            body(&writer)
            return writer.position - base
        }
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        position.pointee = value
        position += 1
    }

    @inline(__always)
    mutating func literal(_ text: StaticString) {
        let count = text.utf8CodeUnitCount
        UnsafeMutableRawPointer(position).copyMemory(from: text.utf8Start, byteCount: count)
        position += count
    }

    @inline(__always)
    mutating func bytes(_ text: UnsafeBufferPointer<UInt8>) {
        if let base = text.baseAddress { UnsafeMutableRawPointer(position).copyMemory(from: base, byteCount: text.count) }
        position += text.count
    }

    @inline(__always)
    mutating func raw(_ text: String) {
        text.withBorrowedUTF8 { bytes($0) }
    }

    /// A reported number as the token wrote it, or `null`.
    mutating func number(_ number: ReportedClaims.NumberText?) {
        if let number { number.withBytes { bytes($0) } } else { literal("null") }
    }

    /// An integer's decimal digits (at most 20 and a sign).
    mutating func int(_ value: Int) {
        if value < 0 { byte(0x2D) }
        var magnitude = value.magnitude
        var digits = 1
        var scale: UInt = 10
        while digits < 20, magnitude >= scale {
            digits += 1
            if scale > UInt.max / 10 { break }
            scale *= 10
        }
        var k = digits
        repeat {
            k -= 1
            position[k] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while k > 0
        position += digits
    }
}

extension RecordWriter {
    /// `text` as a JSON string literal, byte for byte as `JSONText.appendString` writes it (the same escape table,
    /// `JSONText.escape`): `"` and `\` with a backslash, LF, CR and tab by their short escapes, other control
    /// characters and DEL as `\u00XX`; the rest, UTF-8 included, as it is. At most six bytes a byte and two quotes.
    mutating func string(_ text: String) {
        text.withBorrowedUTF8 { bytes in
            byte(0x22)
            if JSONText.needsEscape(UnsafeRawBufferPointer(bytes)) {
                for value in bytes { JSONText.escape(value) { byte($0) } }
            } else {
                self.bytes(bytes)
            }
            byte(0x22)
        }
    }

    mutating func optionalString(_ text: String?) {
        if let text { string(text) } else { literal("null") }
    }
}
