import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an audit's per-record output goes, in input order.
package protocol AuditSink: AnyObject {
    func write(_ bytes: [UInt8]) throws(AuditError)
    func flush() throws(AuditError)
}

/// Buffers output and writes it to a file handle in large pieces.
package final class FileSink: AuditSink {
    private let handle: FileHandle
    private let closes: Bool
    private var buffer: [UInt8] = []
    private let bufferSize: Int

    /// Opens the file at `path` for writing, creating or truncating it in place (`open(2)` with `O_CREAT |
    /// O_TRUNC`): `/dev/null`, a named pipe or `/dev/stdout` are written to, never replaced. (Foundation's
    /// `createFile(atPath:)` writes a new file and renames it over the path: run as root with `--output
    /// /dev/null`, that replaced the system's /dev/null with an empty regular file.)
    package convenience init(path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AuditError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        self.init(handle: FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), closes: true)
    }

    package init(handle: FileHandle, closes: Bool = false, bufferSize: Int = 256 * 1024) {
        self.handle = handle
        self.closes = closes
        self.bufferSize = bufferSize
        buffer.reserveCapacity(bufferSize)
    }

    deinit {
        try? flush()
        if closes { try? handle.close() }
    }

    package func write(_ bytes: [UInt8]) throws(AuditError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= bufferSize { try flush() }
    }

    package func flush() throws(AuditError) {
        guard !buffer.isEmpty else { return }
        do { try handle.write(contentsOf: buffer) } catch { throw AuditError("writing the audit output failed: \(error.localizedDescription)") }
        buffer.removeAll(keepingCapacity: true)
    }
}
