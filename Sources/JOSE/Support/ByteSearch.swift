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
}
