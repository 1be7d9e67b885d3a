import Foundation

/// Whole-file reads and atomic writes for key files.
enum KeyFileIO {
    static func read(_ path: String, limit: Int = 64 << 20) throws(KeyFetchError) -> [UInt8] {
        do {
            let url = URL(fileURLWithPath: path)
            let size = try url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
            guard size <= limit else { throw KeyFetchError(.file, "\(path) is larger than \(limit) bytes") }
            return Array(try Data(contentsOf: url))
        } catch let error as KeyFetchError {
            throw error
        } catch {
            throw KeyFetchError(.file, "cannot read \(path): \(Self.reason(error))")
        }
    }

    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(KeyFetchError) {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw KeyFetchError(.file, "cannot write \(path): \(Self.reason(error))")
        }
    }

    static func isDirectory(_ path: String) -> Bool? {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { return nil }
        return isDir.boolValue
    }

    private static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
           let code = POSIXErrorCode(rawValue: Int32(underlying.code)) {
            return String(cString: strerror(code.rawValue))
        }
        return ns.localizedDescription
    }
}
