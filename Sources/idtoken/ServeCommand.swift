import ArgumentParser
import Dispatch
import Foundation
import IDTokenConfiguration
import IDTokenKit
import IDTokenServe
import Logging

/// `idtoken serve --config FILE [--listen HOST:PORT] [--replay-store memory|redis://…]`: the verification service
/// that nginx `auth_request`, Envoy `ext_authz` and Traefik `forwardAuth` ask (DESIGN §10, docs/serve.md).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Answer reverse proxies' \"is this request's token valid?\" over HTTP (docs/serve.md).",
        discussion: """
            Any method on /verify and below: 200 with X-Auth-* identity headers for a valid token, 401 for a \
            missing or invalid one (WWW-Authenticate, X-Auth-Error), 403 for a policy refusal, 503 with \
            Retry-After when the keys or the replay store are unavailable. /verify/<profile> picks a profile; otherwise the token's issuer \
            does. GET /healthz, /readyz, /metrics. SIGTERM or SIGINT: in-flight requests are answered, then exit 0.

            The configuration is the audit's --config file, with an optional "serve" member (docs/serve.md).
            Exit status: 0 after a shutdown by signal, 2 bad usage or configuration.
            """
    )

    @Option(help: "The configuration file: profiles as for `idtoken audit --config`, plus an optional \"serve\" member.")
    var config: String
    @Option(help: "HOST:PORT to listen on (default: serve.listen, else 127.0.0.1:8080; port 0 picks a free one).")
    var listen: String?
    @Option(name: .customLong("grpc-listen"), help: "HOST:PORT for Envoy's ext_authz over gRPC (envoy.service.auth.v3.Authorization), beside HTTP (default: serve.grpcListen; none).")
    var grpcListen: String?
    @Option(help: "memory, or redis://[[user]:password@]HOST:PORT[/DB] (default: serve.replayStore; none).")
    var replayStore: String?
    @Option(help: "Event-loop threads (default: all cores).")
    var threads: Int?
    @Option(help: "FOR TESTS ONLY: judge every token at this fixed time (Unix seconds or ISO 8601) instead of the clock. Every check still runs.")
    var at: String?
    @Option(help: "Log level: trace, debug, info (default: one line per refused request), notice, warning, error.")
    var logLevel: String = "info"

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else { throw Self.fail("--log-level: unknown level \(logLevel)") }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let configuration: ConfigurationFile
        var settings: ServeSettings
        let fixedTime: Double?
        do {
            fixedTime = try at.map { (text) throws(ConfigurationError) in try UnixTime.argument(text, option: "--at") }
            configuration = try ConfigurationFile.load(path: config)
            let base = (config as NSString).deletingLastPathComponent
            settings = try ServeSettings.parse(configuration.serve, profileNames: configuration.profiles.map(\.name),
                                               baseDirectory: base.isEmpty ? "." : base)
            if let listen { (settings.host, settings.port) = try ServeSettings.parseListen(listen) }
            if let grpcListen { settings.grpcListen = ListenAddress(try ServeSettings.parseListen(grpcListen)) }
            if let replayStore {
                guard replayStore == "memory" || replayStore.hasPrefix("redis://") else {
                    throw ConfigurationError("--replay-store must be memory or a redis:// URL")
                }
                settings.replayStore = replayStore
            }
        } catch let error as ConfigurationError {
            throw Self.fail(error.reason)
        }
        if let threads, threads < 1 { throw Self.fail("--threads must be at least 1") }
        var logger = Logger(label: "idtoken.serve")
        logger.logLevel = level
        var keyLogger = Logger(label: "idtoken.keys")
        keyLogger.logLevel = level
        let service: ServeService
        do {
            service = try ServeService(configuration: configuration, settings: settings,
                                       fixedTime: fixedTime, logger: logger, keyLogger: keyLogger)
        } catch {
            throw Self.fail(error.reason)
        }
        // Each connection holds a descriptor: raise the soft open-files limit (often 1024) to the hard limit
        // before listening, and say so when even that cannot hold maxConnections.
        if let openFiles = OpenFilesLimit.raiseToHardLimit(), openFiles < settings.maxConnections + OpenFilesLimit.reserve {
            logger.warning("the open-files limit is below what serve.maxConnections needs; connections beyond it wait in the listen queue", metadata: [
                "limit": "\(openFiles)", "needed": "\(settings.maxConnections + OpenFilesLimit.reserve)",
            ])
        }
        let server = ServeServer(service: service, threads: threads ?? ProcessInfo.processInfo.activeProcessorCount)
        let address: String
        do {
            let bound = try await server.start()
            address = "\(bound.ipAddress ?? settings.host):\(bound.port ?? settings.port)"
        } catch {
            await server.shutdown()
            throw Self.fail("cannot listen on \(settings.host):\(settings.port): \(error)")
        }
        var grpcLine = ""
        if let listen = settings.grpcListen {
            let (host, port) = (listen.host, listen.port)
            do {
                let bound = try await server.startGRPC(host: host, port: port)
                let grpcAddress = "\(bound.ipAddress ?? host):\(bound.port ?? port)"
                logger.notice("listening (gRPC, envoy.service.auth.v3.Authorization)", metadata: ["address": "\(grpcAddress)"])
                grpcLine = "grpc listening on \(grpcAddress)\n"
            } catch {
                await server.shutdown()
                throw Self.fail("cannot listen for gRPC on \(host):\(port): \(error)")
            }
        }
        if at != nil { logger.warning("judging every token at a fixed time (--at): for tests only") }
        // SIGTERM and SIGINT are watched before the service says it is listening: a supervisor or a script that
        // stops it as soon as it is up must find the handlers in place (a signal between SIG_IGN and the
        // sources' registration was lost, and the service never stopped).
        let stop = await StopSignal.watch([SIGTERM, SIGINT])
        logger.notice("listening", metadata: ["address": "\(address)", "profiles": "\(service.verifier.members.map(\.name).joined(separator: ","))"])
        // Scripts read the bound address (with --listen …:0) from this line on standard output.
        FileHandle.standardOutput.write(Data("listening on \(address)\n\(grpcLine)".utf8))

        await stop.received()
        logger.notice("shutting down: answering in-flight requests")
        await server.shutdown()
        logger.notice("stopped")
    }

    static func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("idtoken serve: \(message)\n".utf8))
        return ExitCode(ExitStatus.usage.rawValue)
    }
}

/// The first SIGTERM or SIGINT, as something to wait for. The signals' default action is turned off (SIG_IGN) and
/// a dispatch source watches each; ``watch(_:)`` returns once every source is registered with the system, so no
/// signal sent after it returns is lost, and one that came before ``received()`` is asked for is kept.
private final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiting: CheckedContinuation<Void, Never>?
    private var sources: [any DispatchSourceSignal] = []

    static func watch(_ signals: [Int32]) async -> StopSignal {
        let stop = StopSignal()
        let registered = DispatchGroup()
        for signalNumber in signals {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { stop.fire() }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            stop.sources.append(source)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            registered.notify(queue: .global()) { continuation.resume() }
        }
        return stop
    }

    /// Returns on the first of the signals (at once if one came already).
    func received() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if fired {
                lock.unlock()
                continuation.resume()
            } else {
                waiting = continuation
                lock.unlock()
            }
        }
    }

    private func fire() {
        lock.lock()
        fired = true
        let pending = waiting
        waiting = nil
        lock.unlock()
        pending?.resume()
    }
}
