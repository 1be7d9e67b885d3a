import JOSE

/// Bytes written in place into a buffer whose size was computed first (an answer's header block, a protobuf
/// message): one `writeWithUnsafeMutableBytes` instead of a bounds and capacity check for every piece.
struct ByteWriter {
    let buffer: UnsafeMutableRawBufferPointer
    private(set) var at = 0

    init(buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        buffer[at] = value
        at += 1
    }

    /// A string's UTF-8 bytes, ASCII letters lower-cased when asked.
    @inline(__always)
    mutating func text(_ text: String, lowercased: Bool = false) {
        text.withBorrowedUTF8 { bytes(UnsafeRawBufferPointer($0), lowercased: lowercased) }
    }

    /// Bytes as they are, ASCII letters lower-cased when asked.
    @inline(__always)
    mutating func bytes(_ bytes: UnsafeRawBufferPointer, lowercased: Bool = false) {
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[at..<at + bytes.count])
        if !bytes.isEmpty { target.copyMemory(from: bytes) }
        if lowercased {
            for index in target.indices where target[index] >= UInt8(ascii: "A") && target[index] <= UInt8(ascii: "Z") {
                target[index] |= 0x20
            }
        }
        at += bytes.count
    }

    @inline(__always)
    mutating func bytes(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[at..<at + $0.count]).copyMemory(from: $0) }
        at += bytes.count
    }

    @inline(__always)
    mutating func text(_ text: StaticString) {
        UnsafeMutableRawBufferPointer(rebasing: buffer[at..<at + text.utf8CodeUnitCount])
            .copyMemory(from: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        at += text.utf8CodeUnitCount
    }
}
