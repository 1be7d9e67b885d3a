import IDTokenKit

/// Reads an ``AuditRecord`` out of a line (DESIGN §7).
///
/// - A line starting with `{` is a JSON object: `token` (a string) is required; `at` (Unix seconds as a number
///   or string, or ISO 8601), `nonce` (a string) and `id` (any JSON value) are optional.
/// - Otherwise the first compact JWS starting `eyJ` anywhere in the line is the token (a bare token, an
///   `Authorization: Bearer …` access-log line, a query string). When such a text line starts with an ISO 8601
///   time, or holds a Common Log Format time in brackets before the token (`[10/Oct/2025:13:55:36 +0000]`),
///   that is the record's `at`.
/// - A line that is one printable word is judged whole as a token (unless it only embeds an `eyJ…` token, as in
///   `id_token=eyJ…`), so that a damaged or padded token gets the verifier's precise error (`malformed`,
///   `token_too_large`, `algorithm_not_allowed`…) rather than being trimmed into shape.
/// - Anything else (binary data, text without a token, a line over the length cap) is `malformed`.
/// - Empty and blank lines are skipped: ``extract(_:)`` returns nil for them. They keep their line numbers.
package struct RecordExtractor: Sendable {
    package init() {}

    /// The record on `line`, or nil when the line is empty or blank.
    package func extract(_ line: RawLine) -> AuditRecord? {
        if line.isOverLong {
            let limit = line.bytes.count
            return AuditRecord(line: line.number, form: .unreadable,
                               problem: TokenError(.malformed, "line \(line.number) is \(line.length) bytes long, over the \(limit)-byte limit for one record; it was not read"))
        }
        let bytes = line.bytes
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, RecordExtractor.isBlank(bytes[start]) { start += 1 }
        while end > start, RecordExtractor.isBlank(bytes[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        let body = bytes[start..<end]
        if line.cutByInputError {
            return AuditRecord(line: line.number, form: .unreadable,
                               problem: TokenError(.malformed, "the input ends inside line \(line.number) (it could not be read further), so the line is incomplete"))
        }
        if body.first == UInt8(ascii: "{") {
            if let fields = body.withUnsafeBufferPointer(JSONRecordScanner.scan) {
                let token = (body.startIndex + fields.token.lowerBound)..<(body.startIndex + fields.token.upperBound)
                return AuditRecord(line: line.number, form: .json, id: fields.id, tokenBytes: body[token], at: fields.at,
                                   nonce: fields.nonce)
            }
            return json(Array(body), line: line.number)
        }
        let printableWord = RecordExtractor.isPrintableWord(body)
        if printableWord, RecordExtractor.startsWithJWS(body) || RecordExtractor.findToken(body) == nil {
            // One word is judged whole, so that a padded or damaged token is refused as the verifier would.
            return AuditRecord(line: line.number, form: .bareToken, tokenBytes: body)
        }
        if let range = RecordExtractor.findToken(body) {
            if range == body.startIndex..<body.endIndex {
                return AuditRecord(line: line.number, form: .bareToken, tokenBytes: body)
            }
            let at = RecordExtractor.leadingTime(body, before: range.lowerBound)
            return AuditRecord(line: line.number, form: .text, tokenBytes: body[range], at: at)
        }
        let binary = body.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) || !RecordExtractor.isUTF8(body)
        return AuditRecord(line: line.number, form: .unreadable,
                           problem: TokenError(.malformed, binary
                                               ? "line \(line.number) holds binary data, not a token record"
                                               : "line \(line.number) holds no token: no compact JWS (eyJ…) and not a JSON record"))
    }

    /// A JSON record read by the strict JSON reader: every line that ``JSONRecordScanner`` does not read.
    func json(_ body: [UInt8], line: Int) -> AuditRecord {
        let object: JSONObject
        do { object = try JSONObject.parse(body, maxDepth: 16) } catch {
            return AuditRecord(line: line, form: .json,
                               problem: TokenError(.malformed, "line \(line) starts with \"{\" but is not a valid JSON object: \(error)"))
        }
        var id: RecordID?
        if let value = object[RecordExtractor.idKey], !value.isNull {
            id = value.kind == .string ? .string(value.string ?? "") : .json(value.rawJSON)
        }
        func bad(_ message: String) -> AuditRecord {
            AuditRecord(line: line, form: .json, id: id, problem: TokenError(.malformed, message))
        }
        guard let tokenValue = object[RecordExtractor.tokenKey] else { return bad("the JSON record on line \(line) has no \"token\"") }
        guard let token = tokenValue.string else { return bad("the JSON record on line \(line) has a \"token\" that is not a string") }
        var at: Double?
        if let value = object[RecordExtractor.atKey], !value.isNull {
            switch value.kind {
            case .integer, .real: at = value.double.flatMap(UnixTime.plausible)
            case .string: at = value.string.flatMap(UnixTime.parse)
            default: break
            }
            guard let seconds = at, seconds.isFinite else {
                return bad("the \"at\" of the JSON record on line \(line) is not a time: use Unix seconds or an RFC 3339 time (2026-01-01T00:00:00Z), not \(value.rawJSON.prefix(60))")
            }
            at = seconds
        }
        var nonce: String?
        if let value = object[RecordExtractor.nonceKey], !value.isNull {
            guard let text = value.string else { return bad("the \"nonce\" of the JSON record on line \(line) is not a string") }
            nonce = text
        }
        return AuditRecord(line: line, form: .json, id: id, token: token, at: at, nonce: nonce)
    }

    /// The members a JSON record may have, hashed once.
    static let idKey = JSONKey("id")
    static let tokenKey = JSONKey("token")
    static let atKey = JSONKey("at")
    static let nonceKey = JSONKey("nonce")

    static func startsWithJWS(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.count >= 3 && bytes[bytes.startIndex] == 0x65 && bytes[bytes.startIndex + 1] == 0x79 && bytes[bytes.startIndex + 2] == 0x4A
    }

    /// Whether every byte is printable ASCII other than space (0x21–0x7E), eight bytes at a time (the last word
    /// overlapping the one before when the length is not a multiple of eight).
    static func isPrintableWord(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBytes { raw -> Bool in
            let count = raw.count
            guard count >= 8 else { return raw.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
            var i = 0
            while i + 8 < count {
                if !isPrintable(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return false }
                i += 8
            }
            return isPrintable(raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        }
    }

    /// Whether no byte of `word` is 0x80 or more, below 0x21 (exact for bytes under 0x80), or DEL.
    @inline(__always)
    private static func isPrintable(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let del = word ^ (0x7F &* ones)
        return (word | ((word &- 0x21 &* ones) & ~word) | ((del &- ones) & ~del)) & (0x80 &* ones) == 0
    }

    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x5F
    }

    /// Whether each byte value can be part of a base64url segment: one load a byte in ``findToken(_:)``.
    private static let base64URLBytes: [Bool] = (0...255).map { isBase64URL(UInt8($0)) }

    /// The first `eyJ…` compact JWS (three base64url segments) in `bytes` that does not start mid-word.
    ///
    /// `ByteSearch` (memchr) finds each `e` that may start `eyJ`; the token's extent is then read sixteen bytes at a time
    /// while they are base64url (``ByteSearch/base64URLRunEnd(in:from:to:)``), across at most two dots.
    static func findToken(_ bytes: ArraySlice<UInt8>) -> Range<Int>? {
        let offset = bytes.startIndex
        return base64URLBytes.withUnsafeBufferPointer { isBase64URL in
            bytes.withUnsafeBufferPointer { buffer -> Range<Int>? in
                guard let base = buffer.baseAddress else { return nil }
                let end = buffer.count
                var i = 0
                while i + 3 <= end {
                    guard let hit = ByteSearch.firstIndex(of: 0x65, in: base, from: i, to: end - 2) else { return nil }
                    i = hit
                    guard buffer[i + 1] == 0x79, buffer[i + 2] == 0x4A, i == 0 || !isBase64URL[Int(buffer[i - 1])] else {
                        i += 1
                        continue
                    }
                    // The segments' runs of base64url sixteen bytes at a time, and at most two dots between them.
                    var j = ByteSearch.base64URLRunEnd(in: base, from: i + 3, to: end)
                    var dots = 0
                    while j < end, buffer[j] == 0x2E, dots < 2 {
                        dots += 1
                        j = ByteSearch.base64URLRunEnd(in: base, from: j + 1, to: end)
                    }
                    if dots == 2 { return (offset + i)..<(offset + j) }
                    i += 3
                }
                return nil
            }
        }
    }

    /// An ISO 8601 time at the start of the line, or a `[dd/Mon/yyyy:HH:MM:SS ±zzzz]` before `limit`.
    static func leadingTime(_ bytes: ArraySlice<UInt8>, before limit: Int) -> Double? {
        var start = bytes.startIndex
        if start < limit, bytes[start] == UInt8(ascii: "[") { start += 1 }
        return bytes.withUnsafeBufferPointer { buffer -> Double? in
            let base = bytes.startIndex
            let head = UnsafeBufferPointer(rebasing: buffer[(start - base)..<(limit - base)])
            if let (seconds, _) = UnixTime.dateTimePrefix(head) { return seconds }
            var i = 0
            while i < limit - base {
                if buffer[i] == UInt8(ascii: "["),
                   let seconds = Timestamp.commonLog(UnsafeBufferPointer(rebasing: buffer[(i + 1)..<(limit - base)])) { return seconds }
                i += 1
            }
            return nil
        }
    }

    static func isUTF8(_ bytes: ArraySlice<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
