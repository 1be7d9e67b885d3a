import JOSE

/// One line of input: its number, its bytes (without the line break) up to the reader's cap, and its real length.
package struct RawLine: Sendable {
    /// 1-based line number in the input.
    package let number: Int
    /// The line's bytes, at most the reader's `maxLineBytes`; a trailing CR (CRLF line ends) is removed. A line
    /// read whole from one chunk of input is a slice of that chunk (its indices are the chunk's), not a copy.
    package let bytes: ArraySlice<UInt8>
    /// The line's full length in bytes; larger than `bytes.count` when the line was over the cap.
    package let length: Int
    /// The input ended inside this line because it could not be read further (a truncated gzip stream).
    package let cutByInputError: Bool

    package init(number: Int, bytes: ArraySlice<UInt8>, length: Int, cutByInputError: Bool = false) {
        self.number = number
        self.bytes = bytes
        self.length = length
        self.cutByInputError = cutByInputError
    }

    package init(number: Int, bytes: [UInt8], length: Int, cutByInputError: Bool = false) {
        self.init(number: number, bytes: bytes[...], length: length, cutByInputError: cutByInputError)
    }

    /// Whether the line was longer than the reader keeps.
    package var isOverLong: Bool { length > bytes.count }
}

/// Splits a ``ByteSource`` into lines, keeping at most `maxLineBytes` of each: a 50 MB line costs no more memory
/// than a short one. Line breaks are LF or CRLF; a last line without a break counts.
///
/// When the source fails (an I/O error, a truncated gzip stream), the lines before the failure are returned
/// first, then ``next()`` returns nil and ``inputError`` says what happened. A line the failure cut in two is
/// returned with ``RawLine/cutByInputError`` set.
package final class LineReader {
    private let source: any ByteSource
    package let maxLineBytes: Int
    // One thread at a time reads lines (the audit's reader thread), so the run-time exclusivity checks of these
    // (one or more a line) are left out.
    @exclusivity(unchecked) private var chunk: [UInt8] = []
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var partial: [UInt8] = []
    @exclusivity(unchecked) private var partialLength = 0
    @exclusivity(unchecked) private var lineNumber = 0
    @exclusivity(unchecked) private var finished = false
    /// Why the input ended early, if it did.
    package private(set) var inputError: AuditInputError?

    private let firstLine: Int

    /// - Parameter firstLine: the number of the first line (1; more for a piece of a larger input, as a pipe
    ///   reads, so that its lines keep their numbers in the whole).
    package init(_ source: any ByteSource, maxLineBytes: Int = 1 << 20, firstLine: Int = 1) {
        self.source = source
        self.maxLineBytes = max(1, maxLineBytes)
        self.firstLine = firstLine
        self.lineNumber = firstLine - 1
    }

    /// Bytes of the underlying input consumed so far (compressed bytes for a gzip source).
    package var bytesConsumed: Int64 { source.bytesConsumed }
    /// The underlying input's size, when known.
    package var totalBytes: Int64? { source.totalBytes }
    /// Lines returned so far.
    package var linesRead: Int { lineNumber - firstLine + 1 }
    /// Whether a line (or part of one) can be returned without reading the source again.
    package var hasBufferedInput: Bool { position < chunk.count }

    /// The next line, or nil at the end of the input (or after an input error: see ``inputError``).
    package func next() -> RawLine? {
        while true {
            if position < chunk.count {
                let end = LineReader.newline(in: chunk, from: position)
                if let end {
                    let start = position
                    position = end + 1
                    if partialLength == 0 {
                        // The whole line is in this chunk: hand out a slice of it, no copy.
                        return line(chunk[start..<min(end, start + maxLineBytes + 1)], length: end - start, cut: false)
                    }
                    append(chunk, start..<end)
                    return takeLine(cut: false)
                }
                append(chunk, position..<chunk.count)
                position = chunk.count
            }
            guard !finished else { return nil }
            do {
                if let next = try source.nextChunk() {
                    chunk = next
                    position = 0
                    continue
                }
                finished = true
                if partialLength > 0 { return takeLine(cut: false) }
                return nil
            } catch {
                finished = true
                inputError = error
                if partialLength > 0 { return takeLine(cut: true) }
                return nil
            }
        }
    }

    /// Keeps the start of a line that continues in the next chunk, up to the cap.
    private func append(_ bytes: [UInt8], _ range: Range<Int>) {
        partialLength += range.count
        let room = maxLineBytes + 1 - partial.count   // one spare byte so that a CR before LF can be told apart
        if room > 0 { partial.append(contentsOf: bytes[range.lowerBound..<(range.lowerBound + min(room, range.count))]) }
    }

    /// The line kept across chunks.
    private func takeLine(cut: Bool) -> RawLine {
        let bytes = partial[...]
        let length = partialLength
        partial = []
        partialLength = 0
        return line(bytes, length: length, cut: cut)
    }

    /// Numbers a line of `length` bytes of which `bytes` (at most the cap and one byte) were kept: without a
    /// CR before its LF, cut to the cap.
    private func line(_ kept: ArraySlice<UInt8>, length: Int, cut: Bool) -> RawLine {
        lineNumber += 1
        var bytes = kept
        var length = length
        if length <= maxLineBytes + 1, bytes.last == 0x0D {
            bytes = bytes.dropLast()
            length -= 1
        }
        if bytes.count > maxLineBytes { bytes = bytes.prefix(maxLineBytes) }
        return RawLine(number: lineNumber, bytes: bytes, length: length, cutByInputError: cut)
    }

    /// The index of the next LF at or after `start`. `ByteSearch` (memchr) looks at 16 or 32 bytes an instruction where the
    /// processor allows; a line is about a kilobyte of token, so this is most of splitting it.
    static func newline(in bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress else { return nil }
            return ByteSearch.firstIndex(of: 0x0A, in: base, from: start, to: buffer.count)
        }
    }
}
