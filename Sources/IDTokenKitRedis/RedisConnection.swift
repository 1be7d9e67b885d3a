internal import CHiredis

/// Why a Redis command did not give an answer.
package struct RedisFailure: Error, CustomStringConvertible {
    package let description: String
    /// The connection can no longer be trusted (I/O error, timeout, protocol error) and must be discarded.
    package let connectionBroken: Bool
}

/// A Redis reply, reduced to what this module reads.
package enum RedisReply: Equatable {
    case status(String)
    case string([UInt8])
    case integer(Int64)
    case null
    case error(String)
    case array(count: Int)
}

/// One blocking connection to Redis: owns its hiredis context and frees it in `deinit`.
///
/// Not thread-safe: the pool hands each connection to one thread at a time, passing it through its lock, which
/// is why it may be declared `Sendable`.
package final class RedisConnection: @unchecked Sendable {
    private let context: UnsafeMutablePointer<redisContext>
    /// Whether a command has failed in a way that leaves the connection unusable.
    package private(set) var isBroken = false

    /// Connects to `host:port`, then authenticates and selects the database if asked.
    package init(host: String, port: Int, connectTimeoutMilliseconds: Int, commandTimeoutMilliseconds: Int,
         username: String?, password: String?, database: Int) throws(RedisFailure) {
        guard let context = idtk_redis_connect(host, Int32(clamping: port), connectTimeoutMilliseconds) else {
            throw RedisFailure(description: "hiredis could not allocate a connection", connectionBroken: true)
        }
        self.context = context
        // From here on `deinit` frees the context, whatever is thrown.
        guard idtk_redis_failed(context) == 0 else {
            throw RedisFailure(description: "cannot connect to \(host):\(port): \(Self.errorText(context))",
                               connectionBroken: true)
        }
        guard idtk_redis_set_timeout(context, commandTimeoutMilliseconds) == REDIS_OK else {
            throw RedisFailure(description: "cannot set the command timeout on the connection to \(host):\(port): "
                               + Self.errorText(context), connectionBroken: true)
        }
        if let password {
            let arguments = username.map { ["AUTH", $0, password] } ?? ["AUTH", password]
            if case .error(let message) = try command(arguments.map { Array($0.utf8) }) {
                throw RedisFailure(description: "Redis refused the password: \(message)", connectionBroken: true)
            }
        }
        if database != 0 {
            if case .error(let message) = try command([Array("SELECT".utf8), Array(String(database).utf8)]) {
                throw RedisFailure(description: "Redis refused to select database \(database): \(message)",
                                   connectionBroken: true)
            }
        }
    }

    deinit { redisFree(context) }

    /// Sends one command (binary-safe arguments) and waits for its reply, within the command timeout.
    package func command(_ arguments: [[UInt8]]) throws(RedisFailure) -> RedisReply {
        precondition(!arguments.isEmpty, "a Redis command needs at least its name")
        guard !isBroken else {
            throw RedisFailure(description: "the connection already failed", connectionBroken: true)
        }
        // redisCommandArgv wants an array of pointers: lay the arguments end to end in one buffer and point
        // into it while it is pinned.
        let joined = arguments.flatMap { $0 }
        let lengths = arguments.map { $0.count }
        let reply: UnsafeMutablePointer<redisReply>? = joined.withUnsafeBufferPointer { bytes in
            withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: arguments.count) { pointers in
                let base = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                var offset = 0
                for (index, length) in lengths.enumerated() {
                    pointers[index] = (base + offset).assumingMemoryBound(to: CChar.self)
                    offset += length
                }
                return lengths.withUnsafeBufferPointer { lengthBuffer in
                    idtk_redis_command_argv(context, Int32(arguments.count), pointers.baseAddress, lengthBuffer.baseAddress)
                }
            }
        }
        guard let reply else {
            isBroken = true
            throw RedisFailure(description: Self.errorText(context), connectionBroken: true)
        }
        defer { freeReplyObject(reply) }
        return Self.decode(reply.pointee)
    }

    private static func decode(_ reply: redisReply) -> RedisReply {
        func text() -> String {
            guard let str = reply.str else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: str, count: reply.len), as: UTF8.self)
        }
        switch reply.type {
        case REDIS_REPLY_STATUS: return .status(text())
        case REDIS_REPLY_ERROR: return .error(text())
        case REDIS_REPLY_INTEGER: return .integer(Int64(reply.integer))
        case REDIS_REPLY_NIL: return .null
        case REDIS_REPLY_ARRAY: return .array(count: reply.elements)
        case REDIS_REPLY_STRING:
            guard let str = reply.str else { return .string([]) }
            return .string(Array(UnsafeRawBufferPointer(start: str, count: reply.len)))
        default: return .error("unexpected reply type \(reply.type)")
        }
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        let text = String(cString: idtk_redis_error(context))
        if text.isEmpty { return "connection error \(idtk_redis_failed(context))" }
        // hiredis reports a timed-out read as "Resource temporarily unavailable".
        if text.contains("temporarily unavailable") { return "timed out (\(text))" }
        return text
    }
}
