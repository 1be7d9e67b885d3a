internal import CJOSEShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte search and comparison for the modules above JOSE (the audit's line splitting and record
/// scanning, the verified-token cache), so that the C calls stay in this module. `memchr` looks at 16 or 32
/// bytes an instruction where the processor allows.
public enum ByteSearch {
    /// The index of the first `byte` in `base[start..<end]`, or nil.
    @inlinable
    package static func firstIndex(of byte: UInt8, in base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int? {
        guard start < end, let hit = memchr(base + start, Int32(byte), end - start) else { return nil }
        return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
    }

    /// Whether the two buffers hold the same bytes (``bytesEqual(_:_:)``: two overlapping loads a side up to
    /// sixteen bytes, `memcmp` beyond).
    @inlinable
    package static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        bytesEqual(a.assumingMemoryBound(to: UInt8.self), b.assumingMemoryBound(to: UInt8.self))
    }

    /// Whether the bytes of `all` from `start` are `bytes` (false when they would run past its end): a token
    /// confirmed on its full text in a page of stored tokens, a string found among interned ones.
    @inlinable
    package static func equal(_ all: UnsafeRawBufferPointer, at start: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard start >= 0, start + bytes.count <= all.count else { return false }
        return equal(UnsafeRawBufferPointer(rebasing: all[start..<(start + bytes.count)]), bytes)
    }

    /// Whether every byte of `bytes` is ASCII from `lowest` to `~` (0x7E): printable ASCII from 0x20 (a header
    /// value `idtoken serve` writes), visible ASCII from 0x21 (a bearer token, which holds no whitespace).
    package static func allASCII(_ bytes: UnsafeRawBufferPointer, from lowest: UInt8) -> Bool {
        precondition(lowest >= 1 && lowest < 0x7F)
        return firstIndex(outside: lowest, 0x7E, in: bytes, from: 0) == bytes.count
    }

    /// The index of the first byte of `bytes` from `start` on that is outside `lowest...highest`, or `bytes.count`:
    /// sixty-four bytes a test while they are all inside (`idtk_inside_blocks64`), then sixteen bytes a vector compare
    /// (`idtk_first_outside16`), the last fifteen one at a time.
    package static func firstIndex(outside lowest: UInt8, _ highest: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return bytes.count }
        var index = start
        // Long runs (a token in a header line) sixty-four bytes a test; the block that holds the byte sixteen at a time.
        if bytes.count - index >= 64 { index += idtk_inside_blocks64(base + index, bytes.count - index, lowest, highest) }
        while index + 16 <= bytes.count {
            let offset = Int(idtk_first_outside16(base + index, lowest, highest))
            if offset < 16 { return index + offset }
            index += 16
        }
        // Eight bytes of what is left at once when the range ends at `~`, as most of a short header value: a word is
        // clean when it has no byte at or above 0x80, none below `lowest` (subtracting `lowest` from every byte
        // borrows into that byte's high bit, and only such a byte starts a borrow) and no DEL.
        if highest == 0x7E && index + 8 <= bytes.count {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let flipped = word ^ (ones &* 0x7F)
            if (word | ((word &- ones &* UInt64(lowest)) & ~word) | ((flipped &- ones) & ~flipped)) & (ones &* 0x80) == 0 {
                index += 8
            }
        }
        while index < bytes.count {
            if base[index] < lowest || base[index] > highest { return index }
            index += 1
        }
        return bytes.count
    }

    /// The index of the first byte of `base[start..<end]` that is not printable ASCII (0x20–0x7E) or is `"` or `\`,
    /// or `end`: where a JSON string whose bytes are its text ends (at a `"`) or stops being that simple. Sixty-four
    /// bytes a test while none stops the run, sixteen bytes a vector compare (`idtk_first_not_plain16`), the last
    /// fifteen one at a time.
    package static func plainStringRunEnd(in base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int {
        runEnd(in: base, from: start, to: end, blocks: { idtk_plain_blocks64($0, $1) },
               sixteen: { idtk_first_not_plain16($0) }) { byte in
            byte >= 0x20 && byte < 0x7F && byte != 0x22 && byte != 0x5C
        }
    }

    /// The index of the first byte of `base[start..<end]` that is not base64url (`A–Z a–z 0–9 - _`), or `end`:
    /// sixty-four bytes a test while all are, sixteen bytes a vector compare (`idtk_first_non_base64url16`), the last
    /// fifteen one at a time.
    package static func base64URLRunEnd(in base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int {
        runEnd(in: base, from: start, to: end, blocks: { idtk_base64url_blocks64($0, $1) },
               sixteen: { idtk_first_non_base64url16($0) }) { byte in
            let folded = byte | 0x20
            return (folded >= 0x61 && folded <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x5F
        }
    }

    /// The index of the first byte of `base[start..<end]` that `belongs` refuses, or `end`: `blocks` (how many bytes
    /// of the `count` at a pointer can be skipped sixty-four at a time) for a long run, then `sixteen` (a vector scan's
    /// position of the first such byte of sixteen, 16 for none) while sixteen can be read, then `belongs`.
    @inline(__always)
    private static func runEnd(in base: UnsafePointer<UInt8>, from start: Int, to end: Int, blocks: (UnsafePointer<UInt8>, Int) -> Int,
                               sixteen: (UnsafePointer<UInt8>) -> UInt32, _ belongs: (UInt8) -> Bool) -> Int {
        var index = start
        if end - index >= 64 { index += blocks(base + index, end - index) }
        while index + 16 <= end {
            let offset = Int(sixteen(base + index))
            if offset < 16 { return index + offset }
            index += 16
        }
        while index < end {
            guard belongs(base[index]) else { return index }
            index += 1
        }
        return end
    }
}
