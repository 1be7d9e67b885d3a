extension Substring {
    /// The text without the spaces and horizontal tabs around it: HTTP's optional whitespace (RFC 9110 §5.6.3), as
    /// around a header value, a cookie's value or a `Cache-Control` directive. Other whitespace (a no-break space, a
    /// line separator) is text, left for whoever reads the value to refuse.
    ///
    /// Byte-wise, and no copy: Foundation's `trimmingCharacters(in:)` reads a kilobyte token as UTF-16 and cost
    /// `idtoken serve` more than an RSA verify a request (BENCHMARKS.md, "Session cookies and App Check tokens read
    /// byte-wise").
    package func trimmingHTTPWhitespace() -> Substring {
        let bytes = utf8
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { bytes.formIndex(after: &start) }
        while start < end {
            let last = bytes.index(before: end)
            guard bytes[last] == 0x20 || bytes[last] == 0x09 else { break }
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
