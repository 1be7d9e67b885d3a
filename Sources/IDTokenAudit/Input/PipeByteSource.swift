import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a pipe (standard input in pipe mode) with `read(2)`, returning whatever has arrived rather than waiting
/// for a full chunk, so that a producer that writes a few lines and waits for their verdicts (`RDD.pipe`, an
/// interactive shell) gets them.
package final class PipeByteSource: ByteSource {
    private let descriptor: Int32
    private let chunkSize: Int
    private let name: String
    /// Bytes read so far.
    package private(set) var bytesConsumed: Int64 = 0
    /// Unknown for a pipe.
    package var totalBytes: Int64? { nil }

    /// Reads `descriptor` (standard input by default), at most `chunkSize` bytes at a time.
    package init(descriptor: Int32 = STDIN_FILENO, name: String = "standard input", chunkSize: Int = 256 * 1024) {
        self.descriptor = descriptor
        self.name = name
        self.chunkSize = max(1, chunkSize)
    }

    /// Whatever the pipe holds (at least one byte), waiting only when it holds nothing; nil at its end.
    package func nextChunk() throws(AuditInputError) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, chunkSize) }
            if n > 0 {
                chunk.removeSubrange(n...)
                bytesConsumed += Int64(n)
                return chunk
            }
            if n == 0 { return nil }
            if errno == EINTR { continue }
            throw AuditInputError(.io, "reading \(name) failed after \(bytesConsumed) bytes: \(String(cString: strerror(errno)))")
        }
    }
}
