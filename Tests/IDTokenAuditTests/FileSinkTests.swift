import Foundation
import Synchronization
@testable import IDTokenAudit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--output PATH` writes into what is at PATH: a device or a named pipe stays what it was, a file is truncated in
/// place (same inode), and a path that cannot be opened is refused with the reason.
@Suite("Audit output files")
struct FileSinkTests {
    /// The file-type bits of `path`'s mode (`S_IFCHR`, `S_IFIFO`, `S_IFREG`), or nil when there is nothing there.
    private func fileType(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : nil
    }

    @Test func devNullStaysADevice() throws {
        #expect(fileType("/dev/null") == S_IFCHR)
        do {
            let sink = try FileSink(path: "/dev/null")
            try sink.write(Array("a verdict line\n".utf8))
            try sink.flush()
        }
        #expect(fileType("/dev/null") == S_IFCHR)
    }

    @Test func aNamedPipeIsWrittenNotReplaced() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("filesink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("verdicts").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // The reader opens the pipe on another thread (each open waits for the other end).
        let received = Mutex<[UInt8]>([])
        let reader = Thread {
            guard let handle = FileHandle(forReadingAtPath: fifo) else { return }
            let data = handle.readDataToEndOfFile()
            received.withLock { $0 = Array(data) }
        }
        reader.start()
        do {
            let sink = try FileSink(path: fifo)
            try sink.write(Array("{\"line\":1}\n".utf8))
            try sink.flush()
        }
        var waited = 0
        while received.withLock({ $0.isEmpty }) && waited < 500 { usleep(10_000); waited += 1 }
        #expect(String(decoding: received.withLock { $0 }, as: UTF8.self) == "{\"line\":1}\n")
        #expect(fileType(fifo) == S_IFIFO)
    }

    @Test func aFileIsTruncatedInPlace() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("filesink-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("an earlier, longer run's verdicts\n".utf8).write(to: URL(fileURLWithPath: path))
        let before = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        do {
            let sink = try FileSink(path: path)
            try sink.write(Array("new\n".utf8))
            try sink.flush()
        }
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self) == "new\n")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int == before)
    }

    @Test func anUnopenablePathIsRefusedWithTheReason() {
        #expect {
            _ = try FileSink(path: "/nonexistent-directory/verdicts.ndjson")
        } throws: { error in
            "\(error)".contains("cannot create /nonexistent-directory/verdicts.ndjson: No such file or directory")
        }
    }
}
