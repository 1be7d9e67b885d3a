import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import IDTokenKitRedis

/// A real `redis-server` for one test: started on a free loopback port with a temporary directory and no
/// persistence, stopped (and its directory removed) by ``stop()`` or at deinit.
public final class RedisServerProcess: @unchecked Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public private(set) var port: Int
    public let directory: URL
    /// The password the tests' own commands authenticate with, once a test has set one (`CONFIG SET requirepass`).
    public var password: String?
    private var process: ChildProcess?

    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Starts a server on a port nobody is listening on, and waits until it answers PING.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("idtk-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try Self.freeLoopbackPort()
        // Another program may take the port between our probe and Redis's bind: try a few.
        for attempt in 1... {
            do {
                try start()
                return
            } catch where attempt < 5 {
                port = try Self.freeLoopbackPort()
            }
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the server again on the same port (after ``stop()``).
    public func start() throws {
        guard let executable = Self.findExecutable("redis-server") else {
            throw Unavailable(description: "redis-server is not on PATH: these tests need a real Redis. Install the "
                + "Debian package redis-server (scripts/test installs it when missing), or put redis-server on PATH.")
        }
        let process = try ChildProcess(executable.path, [
            "--port", String(port), "--bind", "127.0.0.1", "--dir", directory.path,
            "--save", "", "--appendonly", "no", "--daemonize", "no",
            "--logfile", directory.appendingPathComponent("redis.log").path,
        ])
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? command(["PING"])) == .status("PONG") { return }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? ""
        process.send(SIGKILL)
        process.wait()
        self.process = nil
        throw Unavailable(description: "redis-server on port \(port) did not answer PING within 10 s. Its log:\n\(log)")
    }

    /// Stops the server and waits until it has exited.
    ///
    /// `SHUTDOWN NOSAVE`, which also stops a server a test has made deaf to signals; SIGKILL if Redis lingers.
    public func stop() {
        guard let process else { return }
        self.process = nil
        guard process.isRunning else { return }
        _ = try? command(["SHUTDOWN", "NOSAVE"])
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { process.send(SIGKILL) }
        process.wait()
    }

    /// Sends one command on a fresh connection, for the tests' own inspection (EXISTS, PTTL, PING…).
    package func command(_ arguments: [String]) throws -> RedisReply {
        let connection = try RedisConnection(host: "127.0.0.1", port: port, connectTimeoutMilliseconds: 500,
                                             commandTimeoutMilliseconds: 2000, username: nil, password: password, database: 0)
        return try connection.command(arguments.map { Array($0.utf8) })
    }

    public static func findExecutable(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin", "/usr/local/bin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Asks the kernel for a free port by binding port 0 on 127.0.0.1.
    public static func freeLoopbackPort() throws -> Int {
        let (fd, port) = try boundLoopbackSocket()
        close(fd)
        return port
    }

    /// A TCP socket bound to an ephemeral port on 127.0.0.1, and that port; the caller closes it.
    static func boundLoopbackSocket() throws -> (fd: Int32, port: Int) {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Unavailable(description: "socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            close(fd)
            throw Unavailable(description: "bind() failed: \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// A loopback TCP socket that listens but never accepts: connections complete in the kernel's backlog and
/// then hear nothing.
public final class SilentListener {
    public let port: Int
    private let fd: Int32

    public init() throws {
        let (fd, port) = try RedisServerProcess.boundLoopbackSocket()
        guard listen(fd, 16) == 0 else {
            close(fd)
            throw RedisServerProcess.Unavailable(description: "cannot listen on loopback: \(errno)")
        }
        self.fd = fd
        self.port = port
    }

    deinit { close(fd) }
}
