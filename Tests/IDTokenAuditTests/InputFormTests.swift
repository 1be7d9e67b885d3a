import Foundation
import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Input forms, gzip, damaged and extreme input")
struct InputFormTests {
    @Test("the same token in every input form gets the same verdict and fields")
    func everyForm() throws {
        let (token, claims) = try #require(try Sample.validTokens()["facebook"])
        let iat = try #require(claims["iat"] as? Int)
        let at = Double(iat) + 30
        let iso = UnixTime.iso8601(at)
        let clf: String = {
            // 01/Jan/2026:HH:MM:SS +0000 from the ISO form.
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            let parts = iso.split(whereSeparator: { "-T:Z".contains($0) }).map(String.init)
            return "\(parts[2])/\(months[Int(parts[1])! - 1])/\(parts[0]):\(parts[3]):\(parts[4]):\(parts[5]) +0000"
        }()
        let lines = [
            token,                                                             // bare: judged at the audit's time
            record(token, at: at, id: "a"),
            "{\"token\":\"\(token)\",\"at\":\"\(iso)\"}",
            "\(iso) 203.0.113.5 GET /me 200 \"Authorization: Bearer \(token)\"",
            "198.51.100.2 - - [\(clf)] \"GET /cb?id_token=\(token)&s=1 HTTP/1.1\" 200 0",
        ]
        let run = try AuditRun(Array(lines.joined(separator: "\r\n").utf8), verifier: try Sample.verifier(), at: at)
        #expect(run.results.count == 5)
        #expect(run.results.allSatisfy { $0.isValid })
        #expect(run.results.allSatisfy { $0.at == at })
        #expect(Set(run.results.map(\.claims)).count == 1)
        #expect(run.results[0].claims.issuer == "https://www.facebook.com")
        #expect(run.results[0].profile == "facebook")
    }

    @Test("binary junk lines are malformed and the lines around them are audited")
    func binaryJunk() throws {
        let (token, claims) = try #require(try Sample.validTokens()["apple"])
        let at = Double(try #require(claims["iat"] as? Int)) + 1
        var bytes = Array(record(token, at: at).utf8) + [0x0A]
        bytes += [0x00, 0x01, 0xFF, 0xFE, 0x80, 0x0D, 0x1B, 0x5B, 0x32, 0x4A, 0xC0, 0xAF, 0x0A]
        bytes += (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }.filter { $0 != 0x0A } + [0x0A]
        bytes += Array(record(token, at: at).utf8)
        let run = try AuditRun(bytes, verifier: try Sample.verifier())
        #expect(run.results.map(\.line) == [1, 2, 3, 4])
        #expect(run.results.map { $0.error?.code } == [nil, .malformed, .malformed, nil])
        // The output stays valid JSON, one object a line, whatever the input bytes were.
        for line in run.output.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil)
        }
    }

    @Test("an empty file and a file of blank lines audit to nothing, without error")
    func emptyInput() throws {
        let empty = try AuditRun([], verifier: try Sample.verifier())
        #expect(empty.summary.records == 0)
        #expect(empty.summary.lines == 0)
        #expect(empty.output.isEmpty)
        #expect(empty.summary.inputError == nil)
        let blanks = try AuditRun(Array("\n\n  \n\t\n".utf8), verifier: try Sample.verifier())
        #expect(blanks.summary.records == 0)
        #expect(blanks.summary.blankLines == 4)
        #expect(blanks.summary.lines == 4)
        let csv = try AuditRun([], verifier: try Sample.verifier(), format: .csv)
        #expect(csv.output == OutputFormat.csv.header)
    }

    @Test("a gzip file gives exactly what the plain file gives")
    func gzip() throws {
        let plain = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier())
        let source = try GzipByteSource(MemoryByteSource(try Sample.bytes(Sample.gzip), chunkSize: 1000), chunkSize: 3000)
        let zipped = try AuditRun(source, verifier: try Sample.verifier())
        #expect(zipped.summary.inputError == nil)
        #expect(zipped.output == plain.output)
        #expect(zipped.summary.records == plain.summary.records)
    }

    @Test("a file of two concatenated gzip members is read whole")
    func concatenatedMembers() throws {
        let gz = try Sample.bytes(Sample.gzip)
        let plain = try Sample.bytes(Sample.log)
        let source = try GzipByteSource(MemoryByteSource(gz + gz, chunkSize: 777))
        var out: [UInt8] = []
        while let chunk = try source.nextChunk() { out += chunk }
        #expect(out == plain + plain)
    }

    @Test("a truncated gzip file: everything before the cut is audited, then a clear input error", arguments: [0.3, 0.77])
    func truncatedGzip(fraction: Double) throws {
        let gz = try Sample.bytes(Sample.gzip)
        let cut = Array(gz.prefix(Int(Double(gz.count) * fraction)))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idtk-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cut.log.gz").path
        try Data(cut).write(to: URL(fileURLWithPath: path))
        let plain = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier())
        let run = try AuditRun(try GzipByteSource(try FileByteSource(path: path, chunkSize: 4096), name: path), verifier: try Sample.verifier())
        let error = try #require(run.summary.inputError)
        #expect(error.kind == .truncatedGzip)
        #expect(error.message.contains("truncated"))
        #expect(run.results.count > 3)
        #expect(run.results.count < plain.results.count)
        // Every complete line before the cut has its normal verdict; the line the cut split is malformed.
        let complete = run.results.dropLast()
        for (a, b) in zip(complete, plain.results) {
            #expect(a.line == b.line)
            #expect(a.error?.code == b.error?.code)
        }
        let last = try #require(run.results.last)
        #expect(last.error?.code == .malformed)
        #expect(last.error?.message.contains("ends inside line") == true)
    }

    @Test("a corrupt gzip stream is an input error, not a crash")
    func corruptGzip() throws {
        var gz = try Sample.bytes(Sample.gzip)
        for k in stride(from: 2000, to: 2600, by: 3) { gz[k] ^= 0x5A }
        let run = try AuditRun(try GzipByteSource(MemoryByteSource(gz)), verifier: try Sample.verifier())
        #expect(run.summary.inputError?.kind == .corruptGzip)
        let notGzip = try AuditRun(try GzipByteSource(MemoryByteSource(Array("plain text, not gzip\n".utf8))), verifier: try Sample.verifier())
        #expect(notGzip.summary.inputError?.kind == .corruptGzip)
        #expect(notGzip.summary.records == 0)
    }

    @Test("a 50 MB single line is malformed with its line number, read in bounded memory")
    func hugeLine() throws {
        let (token, claims) = try #require(try Sample.validTokens()["firebase"])
        let at = Double(try #require(claims["iat"] as? Int)) + 1
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idtk-audit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("huge.log").path
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data((record(token, at: at) + "\n").utf8))
        let block = Data(repeating: UInt8(ascii: "A"), count: 1 << 20)
        try handle.write(contentsOf: Data("{\"token\":\"".utf8))
        for _ in 0..<50 { try handle.write(contentsOf: block) }
        try handle.write(contentsOf: Data("\"}\n".utf8))
        try handle.write(contentsOf: Data((record(token, at: at) + "\n").utf8))
        try handle.close()

        let before = peakResidentBytes()
        let run = try AuditRun(try FileByteSource(path: path, chunkSize: 256 * 1024), verifier: try Sample.verifier())
        let after = peakResidentBytes()
        #expect(run.results.map(\.line) == [1, 2, 3])
        #expect(run.results.map { $0.error?.code } == [nil, .malformed, nil])
        let message = try #require(run.results[1].error?.message)
        #expect(message.contains("line 2"))
        #expect(message.contains("\((50 << 20) + 12) bytes"))  // {"token":" + 50 MiB + "}
        if let before, let after {
            // Holding the line would take 50 MB at least; the reader keeps 1 MiB of it.
            #expect(after - before < 40 << 20, "peak resident memory grew by \((after - before) >> 20) MB")
        }
    }
}

@Suite("Progress")
struct ProgressTests {
    @Test("progress reports records and the share of the input read, ending at all of it")
    func progress() throws {
        let bytes = try Sample.bytes(Sample.log)
        final class Box: @unchecked Sendable { var updates: [AuditProgress] = [] }
        let box = Box()
        let options = AuditOptions(threads: 2, defaultTime: Sample.at, batchLines: 5, progressInterval: 0)
        let summary = try AuditEngine(verifier: try Sample.verifier(), options: options)
            .run(MemoryByteSource(bytes, chunkSize: 2000), progress: { box.updates.append($0) })
        let last = try #require(box.updates.last)
        #expect(box.updates.count > 3)
        #expect(last.records == summary.records)
        #expect(last.fraction == 1)
        #expect(last.totalBytes == Int64(bytes.count))
        #expect(box.updates.map(\.records) == box.updates.map(\.records).sorted())
        #expect(last.line.contains("\(summary.records) records"))
        #expect(last.line.contains("100%"))
    }
}

@Suite("Recognising gzip input")
struct GzipDetectionTests {
    @Test("gzip is recognised by its first bytes; plain text passes through whole", arguments: [1, 7, 4096])
    func detects(chunk: Int) throws {
        let plain = try Sample.bytes(Sample.log)
        for input in [try Sample.bytes(Sample.gzip), plain] {
            // The first chunk may be tiny; the rest comes in larger pieces, as from a pipe.
            let source = try GzipByteSource.detecting(SplitSource(input, first: chunk))
            var out: [UInt8] = []
            while let piece = try source.nextChunk() { out += piece }
            #expect(out.count == plain.count)
            #expect(out.elementsEqual(plain))
        }
        let empty = try GzipByteSource.detecting(MemoryByteSource([]))
        #expect(try empty.nextChunk() == nil)
    }
}

/// Serves `first` bytes, then the rest in 16 KiB chunks.
final class SplitSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0
    private let first: Int

    init(_ bytes: [UInt8], first: Int) {
        self.bytes = bytes
        self.first = first
    }

    var bytesConsumed: Int64 { Int64(offset) }
    var totalBytes: Int64? { Int64(bytes.count) }

    func nextChunk() throws(AuditInputError) -> [UInt8]? {
        guard offset < bytes.count else { return nil }
        let end = min(bytes.count, offset + (offset == 0 ? first : 16 * 1024))
        defer { offset = end }
        return Array(bytes[offset..<end])
    }
}
