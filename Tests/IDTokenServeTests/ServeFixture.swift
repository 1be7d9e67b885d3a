import Foundation
import IDTokenConfiguration
import IDTokenKit
import IDTokenServe
import Logging
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A running `idtoken serve` on an ephemeral loopback port, configured from a real configuration file with a
/// `serve` member, its keys a JWKS file written by the test, every token judged at ``now``.
final class ServeFixture: @unchecked Sendable {
    static let now: Double = 1_767_268_800      // 2026-01-01T12:00:00Z
    static let project = "serve-test"
    static let oidcIssuer = "https://issuer.example.test"
    static let signer = TestSigner(.rs256, kid: "serve-key-1")
    static let stranger = TestSigner(.rs256, kid: "serve-key-1")   // same kid, other key: bad_signature

    let directory: String
    let server: ServeServer
    let port: Int
    let log: CapturedLog

    /// - Parameters:
    ///   - serve: the `serve` member (JSON text).
    ///   - unreachableProfile: add an OIDC profile whose keys URL answers nothing (keys_unavailable).
    ///   - appCheck: add a `firebase-app-check` profile named `app-check` (``appCheckToken(app:exp:type:)``).
    ///   - signatures: how the HTTP door computes the signatures it batches (default: as the CPU selects).
    init(serve: String = "{}", unreachableProfile: Bool = false, appCheck: Bool = false,
         signatures: RSABatchImplementation? = nil) async throws {
        let log = CapturedLog()
        let (service, directory) = try Self.service(serve: serve, unreachableProfile: unreachableProfile, appCheck: appCheck, log: log,
                                                    signatures: signatures)
        self.log = log
        self.directory = directory
        server = ServeServer(service: service, threads: 2)
        port = try await server.start().port!
    }

    /// The service of a fixture, not listening (for a connection driven by a test): its directory holds the
    /// configuration file and keys, removed when the test process exits (a caller may remove it before).
    static func service(serve: String = "{}", unreachableProfile: Bool = false, appCheck: Bool = false,
                        log: CapturedLog = CapturedLog(), signatures: RSABatchImplementation? = nil) throws -> (ServeService, String) {
        let directory = TestDirectory.make("serve")
        try "{\"keys\":[\(signer.jwk(kid: signer.kid))]}".write(toFile: directory + "/keys.json", atomically: true, encoding: .utf8)
        var profiles = """
            {"provider": "firebase", "projectId": "\(project)", "tenant": "t1", "allowedSignInProviders": ["apple.com"], "keys": "keys.json"},
            {"name": "corp", "provider": "oidc", "issuers": ["\(oidcIssuer)"], "audiences": ["corp-api"], "keys": "keys.json"}
            """
        if appCheck {
            profiles += """
            ,{"name": "app-check", "provider": "firebase-app-check", "projectNumber": "\(appCheckProjectNumber)",
              "appId": ["\(appCheckAppID)"], "keys": "keys.json"}
            """
        }
        if unreachableProfile {
            profiles += """
                ,{"name": "down", "provider": "oidc", "issuers": ["https://down.example.test"], "audiences": ["x"], "keys": "http://127.0.0.1:9/keys"}
                """
        }
        let text = "{\"leeway\": 30, \"profiles\": [\(profiles)], \"serve\": \(serve)}"
        try text.write(toFile: directory + "/config.json", atomically: true, encoding: .utf8)
        let configuration = try ConfigurationFile.load(path: directory + "/config.json")
        var settings = try ServeSettings.parse(configuration.serve, profileNames: configuration.profiles.map(\.name), baseDirectory: directory)
        settings.host = "127.0.0.1"
        settings.port = 0
        if let signatures { settings.signatures = signatures }
        let service = try ServeService(configuration: configuration, settings: settings, fixedTime: now,
                                       logger: log.logger(level: .info), keyLogger: log.logger(level: .critical))
        return (service, directory)
    }

    func stop() async {
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Tokens

    static func firebaseClaims(sub: String = "user-1", extra: String = "", tenant: String = "t1", provider: String = "apple.com",
                               exp: Double = now + 3600) -> String {
        """
        {"iss":"https://securetoken.google.com/\(project)","aud":"\(project)","sub":"\(sub)","iat":\(Int(now - 60)),\
        "exp":\(Int(exp)),"auth_time":\(Int(now - 60)),"firebase":{"sign_in_provider":"\(provider)","tenant":"\(tenant)"}\(extra)}
        """
    }

    static func firebaseToken(sub: String = "user-1", extra: String = "", tenant: String = "t1", provider: String = "apple.com",
                              exp: Double = now + 3600) -> String {
        signer.token(payload: firebaseClaims(sub: sub, extra: extra, tenant: tenant, provider: provider, exp: exp))
    }

    static let appCheckProjectNumber = "123456789012"
    static let appCheckAppID = "1:123456789012:ios:0a1b2c3d4e5f"

    /// A Firebase App Check token of the fixture's project, for `app` (the fixture accepts ``appCheckAppID`` only).
    static func appCheckToken(app: String = appCheckAppID, exp: Double = now + 3600, type: String = "JWT") -> String {
        signer.token(header: "{\"alg\":\"RS256\",\"kid\":\"\(signer.kid)\",\"typ\":\"\(type)\"}", payload: """
            {"sub":"\(app)","aud":["projects/\(appCheckProjectNumber)","projects/\(project)"],"provider":"play_integrity",\
            "iss":"https://firebaseappcheck.googleapis.com/\(appCheckProjectNumber)","exp":\(Int(exp)),"iat":\(Int(now - 60)),"jti":"j-\(app.count)"}
            """)
    }

    static func oidcToken(aud: String = "corp-api", extra: String = "", iss: String = oidcIssuer) -> String {
        signer.token(payload: "{\"iss\":\"\(iss)\",\"aud\":\"\(aud)\",\"sub\":\"svc\",\"iat\":\(Int(now - 10)),\"exp\":\(Int(now + 600))\(extra)}")
    }
}

/// A response as read off the socket.
struct RawResponse {
    let status: Int
    let headers: [(String, String)]
    let body: String

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    func all(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1) }
}

/// A blocking HTTP/1.1 client on one TCP connection, to send exactly the bytes a test means (oversized headers,
/// one byte at a time, keep-alive).
/// Runs blocking socket work on a thread of its own: a test blocking in `recv` on the cooperative pool could starve
/// the server's own tasks (a key fetch, a Redis check) on a 2-core machine.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

final class RawConnection: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, timeoutSeconds: Int = 30) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    /// Sends all of `text`; false when the peer has closed.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// Reads more bytes; 0 at end of stream, -1 on timeout or error.
    private func fill() -> Int {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { buffer += chunk[0..<n] }
        return n
    }

    /// Whether the server closed the connection (end of stream, or a reset) within the receive timeout.
    func isClosedByPeer() async -> Bool { (try? await offPool { self.isClosedByPeerBlocking() }) ?? false }

    /// Whether the peer ends the stream with a FIN (recv returns 0) rather than a reset.
    func isClosedByPeerCleanly() async -> Bool {
        (try? await offPool { () -> Bool in
            while true {
                let n = self.fill()
                if n == 0 { return true }
                if n < 0 { return false }
            }
        }) ?? false
    }

    func isClosedByPeerBlocking() -> Bool {
        while true {
            let n = fill()
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    /// Reads one response; nil when the connection ends (or times out) before a whole one arrived.
    func readResponse() async -> RawResponse? { (try? await offPool { self.readResponseBlocking() }) ?? nil }

    func readResponseBlocking() -> RawResponse? {
        var headerEnd: Int?
        while headerEnd == nil {
            if let range = findHeaderEnd() { headerEnd = range; break }
            if fill() <= 0 { return nil }
        }
        let headText = String(decoding: buffer[0..<headerEnd!], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [(String, String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
        let length = Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
        let start = headerEnd! + 4
        while buffer.count < start + length { if fill() <= 0 { return nil } }
        let body = String(decoding: buffer[start..<(start + length)], as: UTF8.self)
        buffer.removeFirst(start + length)
        return RawResponse(status: status, headers: headers, body: body)
    }

    private func findHeaderEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// One request with these extra header lines; the response.
    func request(_ method: String = "GET", _ target: String = "/verify", headers: [String] = []) async -> RawResponse? {
        (try? await offPool { self.requestBlocking(method, target, headers: headers) }) ?? nil
    }

    func requestBlocking(_ method: String = "GET", _ target: String = "/verify", headers: [String] = []) -> RawResponse? {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for line in headers { text += line + "\r\n" }
        guard send(text + "\r\n") else { return nil }
        return readResponseBlocking()
    }
}

extension ServeFixture {
    /// One request on a fresh connection.
    func get(_ target: String = "/verify", method: String = "GET", headers: [String] = []) async throws -> RawResponse {
        let port = self.port
        return try await offPool {
            let connection = try RawConnection(port: port)
            guard let response = connection.requestBlocking(method, target, headers: headers) else { throw POSIXError(.EIO) }
            return response
        }
    }

    func verify(_ token: String, target: String = "/verify", headers: [String] = []) async throws -> RawResponse {
        try await get(target, headers: ["Authorization: Bearer \(token)"] + headers)
    }
}
