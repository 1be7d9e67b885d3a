import Foundation

/// An executable SwiftPM built beside the test bundle (`idtoken`), run as a user runs it.
public enum BuiltTool {
    /// What a run printed and how it ended.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// The path of the executable `name` built beside this test bundle, if there is one.
    public static func path(_ name: String) -> String? {
        var directories = [URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()]
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        return directories.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs the executable at `path` with `arguments`, `input` on its standard input, and waits for it to end.
    public static func run(_ path: String, _ arguments: [String], input: [UInt8] = []) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        return try await withCheckedThrowingContinuation { continuation in
            // Both pipes are drained while the process runs, so that a long output cannot fill one and stall it.
            let drained = Drained()
            drained.group.enter()
            DispatchQueue.global().async { drained.stdout = out.fileHandleForReading.readDataToEndOfFile(); drained.group.leave() }
            drained.group.enter()
            DispatchQueue.global().async { drained.stderr = err.fileHandleForReading.readDataToEndOfFile(); drained.group.leave() }
            process.terminationHandler = { process in
                drained.group.wait()
                continuation.resume(returning: Result(status: process.terminationStatus, stdout: String(decoding: drained.stdout, as: UTF8.self),
                                                      stderr: String(decoding: drained.stderr, as: UTF8.self)))
            }
            do {
                try process.run()
                stdin.fileHandleForWriting.write(Data(input))
                try? stdin.fileHandleForWriting.close()
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// The two outputs, each written by its reader before the group is left and read after it is waited for.
    private final class Drained: @unchecked Sendable {
        let group = DispatchGroup()
        var stdout = Data()
        var stderr = Data()
    }
}
