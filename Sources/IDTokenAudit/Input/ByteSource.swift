import Foundation
import IDTokenKit

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

/// Reads a file (or standard input) through `FileHandle`, in chunks of a fixed size.
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

    package func nextChunk() throws(AuditInputError) -> [UInt8]? {
        let data: Data?
        do { data = try handle.read(upToCount: chunkSize) } catch {
            throw AuditInputError(.io, "reading \(name) failed after \(bytesConsumed) bytes: \(error.localizedDescription)")
        }
        guard let data, !data.isEmpty else { return nil }
        bytesConsumed += Int64(data.count)
        return [UInt8](data)
    }
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
