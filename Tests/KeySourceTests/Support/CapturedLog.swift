import Logging
import NIOConcurrencyHelpers

/// A swift-log destination that keeps what it is given, so that tests can check what the cache reported.
final class CapturedLog: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let storage = NIOLockedValueBox<[Entry]>([])

    var entries: [Entry] { storage.withLockedValue { $0 } }

    func entries(at level: Logger.Level) -> [Entry] { entries.filter { $0.level == level } }

    /// A logger writing here, at `level` and above.
    func logger(level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "test") { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var all = metadata.mapValues { "\($0)" }
            for (key, value) in event.metadata ?? [:] { all[key] = "\(value)" }
            let entry = Entry(level: event.level, message: "\(event.message)", metadata: all)
            log.storage.withLockedValue { $0.append(entry) }
        }
    }
}
