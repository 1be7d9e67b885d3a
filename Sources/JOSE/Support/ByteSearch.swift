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
    ///
    /// Eight bytes at a time: a word is ruled out at once when it has a byte at or above 0x80, a byte below
    /// `lowest` (subtracting `lowest` from every byte borrows into that byte's high bit, and only such a byte
    /// starts a borrow) or DEL; the bytes from the first such word on are looked at one by one, so the answer
    /// is exact.
    @inlinable
    package static func allASCII(_ bytes: UnsafeRawBufferPointer, from lowest: UInt8) -> Bool {
        precondition(lowest >= 1 && lowest < 0x7F)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs = ones &* 0x80, floor = ones &* UInt64(lowest)
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let flipped = word ^ (ones &* 0x7F)          // a DEL byte becomes 0
            let below = (word &- floor) & ~word
            let del = (flipped &- ones) & ~flipped
            if (word | below | del) & highs != 0 { break }
            index += 8
        }
        while index < bytes.count {
            guard bytes[index] >= lowest && bytes[index] < 0x7F else { return false }
            index += 1
        }
        return true
    }
}
