import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A child process started with `posix_spawn`, for tests that run programs (`idtoken`, `redis-server`, a probe).
///
/// Not Foundation's `Process`: on Linux its `run()` looks up the highest open descriptor by copying whole
/// `dirent` records out of `/proc/self/fd`, which reads past glibc's buffer and now and then crashes the test
/// process (swift-corelibs-foundation#5472, still in Swift 6.3.1's Foundation; the doors test, some 400 spawns,
/// met it about once in six runs). The child starts with the descriptors it is given and no others (every
/// descriptor from 3 up is closed in it), an empty signal mask and default signal actions (a child of a
/// libdispatch worker thread would otherwise inherit a mask with SIGTERM blocked).
///
/// This file is shared with the integrations' tests (`Integrations/Tests/*/ChildProcess.swift` links to it), so it
/// uses nothing but the system.
public final class ChildProcess: Sendable {
    /// What one of the child's standard streams is.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe, whose other end the parent gets (``standardInput``, ``standardOutput``, ``standardError``).
        case pipe
    }

    public struct SpawnFailure: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: pid_t
    /// The write end of the child's standard input, when it is a pipe.
    public let standardInput: FileHandle?
    /// The read end of the child's standard output, when it is a pipe.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error, when it is a pipe.
    public let standardError: FileHandle?
    /// The wait status once the child has been reaped.
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` and this process's environment.
    public init(_ executable: String, _ arguments: [String], standardInput input: Stream = .null,
                standardOutput output: Stream = .null, standardError error: Stream = .null) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [FileHandle?] = []
        var childEnds: [Int32] = []
        defer { for fd in childEnds { close(fd) } }
        for (target, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                parentEnds.append(nil)
            case .pipe:
                var fds: [Int32] = [-1, -1]
                guard pipe(&fds) == 0 else {
                    for handle in parentEnds { try? handle?.close() }
                    throw SpawnFailure(description: "pipe: \(String(cString: strerror(errno)))")
                }
                // Close-on-exec, so that another program started meanwhile holds no end (dup2 clears the flag in
                // this child); the close of every descriptor from 3 up covers the moment before the flag is set.
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                let (childEnd, parentEnd) = target == 0 ? (fds[0], fds[1]) : (fds[1], fds[0])
                childEnds.append(childEnd)
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                parentEnds.append(FileHandle(fileDescriptor: parentEnd, closeOnDealloc: true))
            }
        }
        Self.closeFrom3(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else {
            for handle in parentEnds { try? handle?.close() }
            throw SpawnFailure(description: "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        standardInput = parentEnds[0]
        standardOutput = parentEnds[1]
        standardError = parentEnds[2]
    }

    /// Whether the child has not exited yet (reaping it if it has).
    public var isRunning: Bool {
        reaped.withLock { status in
            guard status == nil else { return false }
            var value: Int32 = 0
            if waitpid(pid, &value, WNOHANG) == pid { status = value }
            return status == nil
        }
    }

    /// Waits until the child exits and returns its exit status (128 + the signal's number when a signal ended it).
    @discardableResult
    public func wait() -> Int32 {
        while true {
            if let status = reaped.withLock({ $0 }) { return Self.exitStatus(status) }
            // Wait without reaping, so that `isRunning` on another thread never loses the status.
            var info = siginfo_t()
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
            if result != 0 && errno == EINTR { continue }
            _ = isRunning
            if result != 0 { return reaped.withLock { $0 }.map(Self.exitStatus) ?? -1 }
        }
    }

    /// Sends `signal` to the child, if it has not been reaped.
    public func send(_ signal: Int32) {
        reaped.withLock { status in
            if status == nil { _ = kill(pid, signal) }
        }
    }

    private static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Closes every descriptor from 3 up in the child (glibc's `posix_spawn_file_actions_addclosefrom_np`, found at
    /// run time: the Swift overlay does not declare it).
    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }
}
