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
        let (chunk, failure) = readChunk(descriptor, size: chunkSize, fills: false)
        if let failure {
            throw AuditInputError(.io, "reading \(name) failed after \(bytesConsumed) bytes: \(String(cString: strerror(failure)))")
        }
        bytesConsumed += Int64(chunk.count)
        return chunk.isEmpty ? nil : chunk
    }
}
