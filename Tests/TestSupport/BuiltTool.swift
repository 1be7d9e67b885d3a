import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
        let child = try ChildProcess(path, arguments, standardInput: .pipe, standardOutput: .pipe, standardError: .pipe)
        return await withCheckedContinuation { continuation in
            // Both pipes are drained while the process runs, so that a long output cannot fill one and stall it; the
            // input is written from a thread of its own for the same reason.
            let drained = Drained()
            drained.group.enter()
            DispatchQueue.global().async { drained.stdout = child.standardOutput!.readDataToEndOfFile(); drained.group.leave() }
            drained.group.enter()
            DispatchQueue.global().async { drained.stderr = child.standardError!.readDataToEndOfFile(); drained.group.leave() }
            DispatchQueue.global().async {
                // A child that exits without reading its input must not kill the tests with SIGPIPE: with the
                // signal blocked on this thread, write(2) answers EPIPE, and the pending signal is taken back.
                if !input.isEmpty {
                    var pipeSignal = sigset_t()
                    sigemptyset(&pipeSignal)
                    sigaddset(&pipeSignal, SIGPIPE)
                    pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                    try? child.standardInput!.write(contentsOf: input)
                    var none = timespec()
                    while sigtimedwait(&pipeSignal, nil, &none) == SIGPIPE {}
                }
                try? child.standardInput!.close()
                let status = child.wait()
                drained.group.wait()
                continuation.resume(returning: Result(status: status, stdout: String(decoding: drained.stdout, as: UTF8.self),
                                                      stderr: String(decoding: drained.stderr, as: UTF8.self)))
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
