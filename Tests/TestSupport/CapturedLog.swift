import JOSE
import Logging
import Synchronization

/// A swift-log destination that keeps what it is given, so that tests can check what a key cache or a replay
/// store reported.
public final class CapturedLog: Sendable {
    public struct Entry: Sendable {
        public let level: Logger.Level
        public let message: String
        public let metadata: [String: String]
    }

    private let storage = Mutex<[Entry]>([])

    public init() {}

    public var entries: [Entry] { storage.withCriticalSection { $0 } }

    public func entries(at level: Logger.Level) -> [Entry] { entries.filter { $0.level == level } }

    /// Whether an entry at `level` has `text` in its message.
    public func contains(level: Logger.Level, _ text: String) -> Bool {
        storage.withCriticalSection { $0.contains { $0.level == level && $0.message.contains(text) } }
    }

    /// A logger writing here, at `level` and above.
    public func logger(level: Logger.Level = .debug) -> Logger {
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
            log.storage.withCriticalSection { $0.append(entry) }
        }
    }
}
