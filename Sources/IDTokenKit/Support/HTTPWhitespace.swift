/// HTTP's optional whitespace (RFC 9110 §5.6.3): the spaces and horizontal tabs around a header value, a cookie's
/// value or a `Cache-Control` directive. Other whitespace (a no-break space, a line separator) is text, left for
/// whoever reads the value to refuse.
///
/// Read byte-wise: Foundation's `trimmingCharacters(in:)` reads a kilobyte token as UTF-16 and cost `idtoken serve`
/// more than an RSA verify a request (BENCHMARKS.md, "Session cookies and App Check tokens read byte-wise").
package enum HTTPWhitespace {
    /// Whether `byte` is a space or a horizontal tab.
    @inlinable
    package static func isOptional(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// `range` of `bytes` without the optional whitespace at either end (the request parser's header values, a
    /// cookie's value).
    @inlinable
    package static func trimming(_ range: Range<Int>, of bytes: UnsafeRawBufferPointer) -> Range<Int> {
        var start = range.lowerBound, end = range.upperBound
        while start < end && isOptional(bytes[start]) { start += 1 }
        while end > start && isOptional(bytes[end - 1]) { end -= 1 }
        return start..<end
    }
}

extension Substring {
    /// The text without HTTP's optional whitespace around it (``HTTPWhitespace``), without a copy.
    package func trimmingHTTPWhitespace() -> Substring {
        let bytes = utf8
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, HTTPWhitespace.isOptional(bytes[start]) { bytes.formIndex(after: &start) }
        while start < end {
            let last = bytes.index(before: end)
            guard HTTPWhitespace.isOptional(bytes[last]) else { break }
            end = last
        }
        // Both ends are next to an ASCII byte or at the text's own ends, so they fall between Unicode scalars.
        return self[start..<end]
    }
}

extension String {
    /// ``Substring/trimmingHTTPWhitespace()`` of the whole string: the string itself, uncopied, when there is none.
    package func trimmingHTTPWhitespace() -> String {
        let trimmed = self[...].trimmingHTTPWhitespace()
        return trimmed.startIndex == startIndex && trimmed.endIndex == endIndex ? self : String(trimmed)
    }
}
