import Foundation

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

    /// Creates (or truncates) the file at `path`.
    package convenience init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw AuditError("cannot create \(path)")
        }
        self.init(handle: handle, closes: true)
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
