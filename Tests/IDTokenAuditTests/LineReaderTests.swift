import Foundation
import IDTokenAudit
import Testing

@Suite("Splitting input into lines")
struct LineReaderTests {
    func lines(_ text: String, chunk: Int, cap: Int = 1 << 20) -> [RawLine] {
        let reader = LineReader(MemoryByteSource(Array(text.utf8), chunkSize: chunk), maxLineBytes: cap)
        var out: [RawLine] = []
        while let line = reader.next() { out.append(line) }
        return out
    }

    @Test("LF and CRLF endings, a last line without one, blank lines kept", arguments: [1, 2, 3, 7, 64, 4096])
    func endings(chunk: Int) {
        let read = lines("alpha\r\nbeta\n\ngamma delta\nlast", chunk: chunk)
        #expect(read.map { String(decoding: $0.bytes, as: UTF8.self) } == ["alpha", "beta", "", "gamma delta", "last"])
        #expect(read.map(\.number) == [1, 2, 3, 4, 5])
        #expect(read.allSatisfy { !$0.isOverLong })
    }

    @Test("a line over the cap keeps only the cap and its true length", arguments: [5, 16, 1000])
    func overLong(chunk: Int) {
        let long = String(repeating: "x", count: 250)
        let read = lines("short\n\(long)\nnext\n", chunk: chunk, cap: 100)
        #expect(read.count == 3)
        #expect(read[1].bytes.count == 100)
        #expect(read[1].length == 250)
        #expect(read[1].isOverLong)
        #expect(String(decoding: read[2].bytes, as: UTF8.self) == "next")
    }

    @Test("an empty input has no lines")
    func empty() {
        #expect(lines("", chunk: 10).isEmpty)
    }
}
