import Foundation

/// Fresh directories for a test's files, all under one directory of this test process's own, which is removed when
/// the process exits: a fixture stopped from a `Task` in a `defer`, or a test that throws before its own clean-up,
/// leaves nothing behind in the system's temporary directory.
public enum TestDirectory {
    /// A fresh empty directory, named `prefix` and a UUID, under the process's own.
    public static func make(_ prefix: String) -> String {
        let path = root + "/" + prefix + "-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static let root: String = {
        let path = NSTemporaryDirectory() + "idtk-tests-\(getpid())-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestDirectory.root) }
        return path
    }()
}
