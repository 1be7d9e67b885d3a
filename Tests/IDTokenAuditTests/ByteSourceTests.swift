import Foundation
import IDTokenAudit
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Byte sources: files, standard input and pipes read with read(2)")
struct ByteSourceTests {
    /// Bytes that differ from chunk to chunk, so that a chunk read twice or out of place shows.
    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    static func drain(_ source: any ByteSource) throws -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        while let chunk = try source.nextChunk() { chunks.append(chunk) }
        return chunks
    }

    @Test("a file comes in full chunks, the last one short, then nil; the bytes and their count are the file's")
    func fileInChunks() throws {
        let bytes = ByteSourceTests.pattern(70_001)
        let path = NSTemporaryDirectory() + "idtk-bytesource-\(getpid()).log"
        defer { unlink(path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let source = try FileByteSource(path: path, chunkSize: 4096)
        #expect(source.totalBytes == 70_001)
        let chunks = try ByteSourceTests.drain(source)
        #expect(chunks.dropLast().allSatisfy { $0.count == 4096 })
        #expect(chunks.last?.count == 70_001 % 4096)
        #expect(Array(chunks.joined()) == bytes)
        #expect(source.bytesConsumed == 70_001)
        #expect(try source.nextChunk() == nil)
    }

    @Test("a pipe read as a file (standard input) fills each chunk across the writer's small writes")
    func pipeFillsChunks() throws {
        let bytes = ByteSourceTests.pattern(10_000)
        let pipe = Pipe()
        let writer = Thread {
            let handle = pipe.fileHandleForWriting
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + 700)
                handle.write(Data(bytes[offset..<end]))
                offset = end
                usleep(200)
            }
            try? handle.close()
        }
        writer.start()
        let source = FileByteSource(handle: pipe.fileHandleForReading, name: "the pipe", chunkSize: 3000)
        let chunks = try ByteSourceTests.drain(source)
        #expect(chunks.map(\.count) == [3000, 3000, 3000, 1000])
        #expect(Array(chunks.joined()) == bytes)
        #expect(source.totalBytes == nil)
    }

    @Test("pipe mode returns what has arrived without waiting for a full chunk")
    func pipeModeDoesNotWait() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]) }
        let source = PipeByteSource(descriptor: descriptors[0], name: "the pipe", chunkSize: 1 << 16)
        let line = Array("eyJ.a.b\n".utf8)
        #expect(line.withUnsafeBytes { write(descriptors[1], $0.baseAddress, $0.count) } == line.count)
        // The writer keeps the pipe open: a read that waited for 64 KiB would never return.
        #expect(try source.nextChunk() == line)
        close(descriptors[1])
        #expect(try source.nextChunk() == nil)
        #expect(source.bytesConsumed == Int64(line.count))
    }

    @Test("a descriptor that cannot be read is an io error that names the input")
    func unreadableDescriptor() throws {
        let path = NSTemporaryDirectory() + "idtk-bytesource-wo-\(getpid()).log"
        defer { unlink(path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x\n".utf8)))
        // Opened for writing only: read(2) fails with EBADF.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        let source = FileByteSource(handle: handle, name: "the log", chunkSize: 4096)
        #expect {
            _ = try source.nextChunk()
        } throws: { error in
            guard let error = error as? AuditInputError else { return false }
            return error.kind == .io && error.message.hasPrefix("reading the log failed after 0 bytes: ")
        }
    }
}
