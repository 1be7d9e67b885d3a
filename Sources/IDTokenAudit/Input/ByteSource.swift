import Foundation
import IDTokenKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A stream of input bytes read in chunks: a file, standard input, or a decompressor over either.
///
/// Sources are read by one thread (the audit's reader) and never shared, so they need not be `Sendable`.
package protocol ByteSource: AnyObject {
    /// The next chunk of bytes, or nil at the end of the input.
    /// - Throws: ``AuditInputError`` when the input cannot be read (an I/O error, a corrupt or truncated gzip
    ///   stream). Bytes returned before the error are valid input.
    func nextChunk() throws(AuditInputError) -> [UInt8]?

    /// How many bytes of the underlying input (the file, compressed or not) have been consumed so far.
    var bytesConsumed: Int64 { get }

    /// The underlying input's size, when it is known (a regular file), for progress and ETA.
    var totalBytes: Int64? { get }
}

/// Why the audit could not read its input to the end.
package typealias AuditInputError = InputError<AuditInputErrorKind>

/// What kind of input failure (``AuditInputError``'s `Kind`).
package enum AuditInputErrorKind: String, Sendable {
    /// The file could not be opened or read.
    case io
    /// The gzip stream is not valid gzip.
    case corruptGzip = "corrupt_gzip"
    /// The gzip stream ends before its end marker: the file was cut short.
    case truncatedGzip = "truncated_gzip"
}

/// Reads a file (or standard input) in chunks of a fixed size, each filled by `read(2)` calls straight into the
/// chunk. (`FileHandle.read(upToCount:)` reads 4 KiB a system call on Linux, through a `Data` copied again into
/// the chunk: most of the audit's reader thread.)
package final class FileByteSource: ByteSource {
    private let handle: FileHandle
    private let chunkSize: Int
    private let name: String
    private let ownsHandle: Bool
    package private(set) var bytesConsumed: Int64 = 0
    package let totalBytes: Int64?

    /// Opens `path` for reading.
    package init(path: String, chunkSize: Int = 256 * 1024) throws(AuditInputError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw AuditInputError(.io, "\(path) \(reason)")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw AuditInputError(.io, "\(path) is a directory, not a log file")
        }
        self.handle = handle
        self.chunkSize = chunkSize
        self.name = path
        self.ownsHandle = true
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        if attributes?[.type] as? FileAttributeType == .typeRegular, let size = attributes?[.size] as? NSNumber {
            totalBytes = size.int64Value
        } else {
            totalBytes = nil
        }
    }

    /// Reads an open handle, such as standard input; its size is unknown.
    package init(handle: FileHandle, name: String = "standard input", chunkSize: Int = 256 * 1024) {
        self.handle = handle
        self.chunkSize = chunkSize
        self.name = name
        self.ownsHandle = false
        self.totalBytes = nil
    }

    deinit {
        if ownsHandle { try? handle.close() }
    }

    /// A read error that came after bytes of the same chunk: those are returned first, the error on the next call.
    private var pendingError: Int32?

    package func nextChunk() throws(AuditInputError) -> [UInt8]? {
        if let pendingError { throw readFailure(pendingError) }
        let (chunk, failure) = readChunk(handle.fileDescriptor, size: chunkSize, fills: true)
        bytesConsumed += Int64(chunk.count)
        if let failure {
            guard !chunk.isEmpty else { throw readFailure(failure) }
            pendingError = failure
        }
        return chunk.isEmpty ? nil : chunk
    }

    private func readFailure(_ code: Int32) -> AuditInputError {
        AuditInputError(.io, "reading \(name) failed after \(bytesConsumed) bytes: \(String(cString: strerror(code)))")
    }
}

/// Reads at most `size` bytes of `descriptor` into a new array with `read(2)`, retrying on EINTR: with `fills`,
/// until the array is full or the input ends; otherwise whatever the first read that returns bytes gives (a pipe's
/// waiting lines). Returns the bytes read and, when a read failed, its `errno` (the bytes before it stand).
func readChunk(_ descriptor: Int32, size: Int, fills: Bool) -> (bytes: [UInt8], errno: Int32?) {
    var failure: Int32?
    let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
        count = 0
        while count < size {
            let n = read(descriptor, buffer.baseAddress! + count, size - count)
            if n > 0 {
                count += n
                if !fills { break }
            } else if n == 0 {
                break
            } else if errno != EINTR {
                failure = errno
                break
            }
        }
    }
    return (bytes, failure)
}

/// Serves bytes from memory, in chunks of a chosen size: for tests and benchmarks that must not touch disk.
package final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private let chunkSize: Int
    private var offset = 0

    package init(_ bytes: [UInt8], chunkSize: Int = 64 * 1024) {
        self.bytes = bytes
        self.chunkSize = max(1, chunkSize)
    }

    package var bytesConsumed: Int64 { Int64(offset) }
    package var totalBytes: Int64? { Int64(bytes.count) }

    package func nextChunk() throws(AuditInputError) -> [UInt8]? {
        guard offset < bytes.count else { return nil }
        let end = min(bytes.count, offset + chunkSize)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }
}
