import IDTokenKit
import JOSE

/// The shards' verdict lines merged into one process's (DESIGN §12, `idtoken audit merge --shard-verdicts`):
/// the NDJSON each shard wrote (`--output`), one line a record in line order, merged by line into one stream,
/// with the verdicts a later shard overturned settled as ``AuditSummary/settle(_:claims:)`` settles the summary.
///
/// Streaming: a k-way merge by line number of the shards' files (each already in line order), one line of each
/// file held at a time; only the lines a settlement changes are looked at beyond their line number. The lines are
/// the audit's own NDJSON (``RecordRendering/ndjson(_:into:)``), whose members come in a fixed order; after
/// `valid` they hold only strings (escaped, so never a bare `"`), numbers, `null` and lists of strings, so the last
/// `,"valid":` of a line is its verdict's. A changed line is written with the pieces that rendering writes.
package enum VerdictMerge {
    /// What the merge found.
    package struct Outcome: Sendable {
        /// Verdict lines written.
        package var lines = 0
        /// Valid verdicts that became `replayed` (claims a later shard overturned).
        package var settled = 0
        /// Replayed verdicts whose first line was an overturned claim, now naming the earliest.
        package var renamed = 0
        /// The issuer and subject of each settled line, for the summary's replay examples.
        package var claims: [Int: (issuer: String?, subject: String?)] = [:]
    }

    /// One shard's verdict file being read.
    private final class Cursor {
        let name: String
        let reader: LineReader
        var line = 0
        var bytes: ArraySlice<UInt8> = []
        var shard: Int?
        var count = 0

        init(name: String, reader: LineReader) {
            self.name = name
            self.reader = reader
        }
    }

    /// Merges the shards' verdict files into `output`.
    /// - Parameters:
    ///   - files: each shard's verdict file (its `--output`), named as errors name them; `source` opens one.
    ///   - records: each shard's record count by index (its summary's `records`): a shard's file holds that many
    ///     lines, all of that shard.
    ///   - shardCount: the run's number of shards.
    ///   - settlement: the claims a later shard overturned.
    /// - Throws: ``AuditError`` naming the file when a file is not a shard's NDJSON verdicts in line order,
    ///   two files hold one shard, a shard's file does not hold its summary's records, or a settled line is not
    ///   the valid verdict the claim was made with (the file is not of the merged run of its shard).
    package static func merge(_ files: [(name: String, source: any ByteSource)], records: [Int: Int], shardCount: Int,
                              settlement: ShardSettlement, into output: any AuditSink) throws(AuditError) -> Outcome {
        var cursors: [Cursor] = []
        for file in files {
            // A verdict line holds a record's id as the record gave it (up to the audit's --max-line-bytes).
            cursors.append(Cursor(name: file.name, reader: LineReader(file.source, maxLineBytes: 1 << 30)))
        }
        var heap = LineHeap()
        for (k, cursor) in cursors.enumerated() where try advance(cursor, shardCount: shardCount) { heap.push(cursor.line, k) }
        var outcome = Outcome()
        var out: [UInt8] = []
        out.reserveCapacity(256 * 1024)
        var previous = (line: 0, file: "")
        let rewrite = Rewriter(settlement)
        while let (line, k) = heap.pop() {
            let cursor = cursors[k]
            if line == previous.line {
                throw AuditError("\(previous.file) and \(cursor.name) both hold line \(line): give each shard's verdicts once")
            }
            previous = (line, cursor.name)
            try rewrite.line(cursor.bytes, number: line, file: cursor.name, into: &out, outcome: &outcome)
            outcome.lines += 1
            if out.count >= 256 * 1024 {
                try write(&out, to: output)
            }
            if try advance(cursor, shardCount: shardCount) { heap.push(cursor.line, k) }
        }
        try write(&out, to: output)
        try output.flush()

        var byShard: [Int: String] = [:]
        for cursor in cursors {
            guard let shard = cursor.shard else { continue }
            if let other = byShard[shard] {
                throw AuditError("\(other) and \(cursor.name) both hold the verdicts of shard \(shard)/\(shardCount)")
            }
            byShard[shard] = cursor.name
        }
        for (shard, expected) in records.sorted(by: { $0.key < $1.key }) {
            let held = cursors.first { $0.shard == shard }?.count ?? 0
            guard held == expected else {
                let name = byShard[shard].map { "\($0) holds \(held) verdict lines of shard \(shard)/\(shardCount)" }
                    ?? "no verdict file holds shard \(shard)/\(shardCount)"
                throw AuditError(name + " but its summary counts \(expected) records: give each shard's --output"
                                        + " with the summary of the same run of the shard")
            }
        }
        return outcome
    }

    private static func write(_ out: inout [UInt8], to output: any AuditSink) throws(AuditError) {
        guard !out.isEmpty else { return }
        try output.write(out)
        out.removeAll(keepingCapacity: true)
    }

    /// Reads the cursor's next line and its number; false at the end of the file.
    private static func advance(_ cursor: Cursor, shardCount: Int) throws(AuditError) -> Bool {
        guard let raw = cursor.reader.next() else {
            if let error = cursor.reader.inputError { throw AuditError("\(cursor.name): \(error.message)") }
            return false
        }
        let bytes = raw.bytes
        guard let number = lineNumber(bytes) else {
            if cursor.count == 0, bytes.starts(with: Array("line,id,".utf8)) {
                throw AuditError("\(cursor.name) is CSV: merge reads the shards' NDJSON verdicts (--format ndjson, the default)")
            }
            throw AuditError("\(cursor.name) line \(raw.number) is not a verdict line of idtoken audit (NDJSON)")
        }
        guard number > cursor.line else {
            throw AuditError("\(cursor.name) is not in line order (line \(number) after \(cursor.line)): give each shard's --output as it wrote it")
        }
        let shard = number % shardCount
        if let known = cursor.shard, known != shard {
            throw AuditError("\(cursor.name) holds lines of shards \(known)/\(shardCount) and \(shard)/\(shardCount): not one shard's verdicts of this run")
        }
        cursor.shard = shard
        cursor.line = number
        cursor.bytes = bytes
        cursor.count += 1
        return true
    }

    /// The number of a verdict line: `{"line":N,` begins every NDJSON record the audit writes.
    static func lineNumber(_ bytes: ArraySlice<UInt8>) -> Int? {
        let head: StaticString = "{\"line\":"
        let count = head.utf8CodeUnitCount
        guard bytes.count > count + 1 else { return nil }
        var k = bytes.startIndex
        for i in 0..<count {
            guard bytes[k] == head.utf8Start[i] else { return nil }
            k += 1
        }
        var value = 0, digits = 0
        while k < bytes.endIndex, bytes[k] >= 0x30, bytes[k] <= 0x39, digits < 18 {
            value = value * 10 + Int(bytes[k] - 0x30)
            digits += 1
            k += 1
        }
        guard digits > 0, k < bytes.endIndex, bytes[k] == 0x2C else { return nil }
        return value
    }

    /// Writes each line as it is, or as one process would have written it after the settlement.
    private struct Rewriter {
        let settlement: ShardSettlement
        /// The replay message around its line number (``AuditEngine/replayMessage(_:)``, the one wording).
        let messageHead: [UInt8], messageTail: [UInt8]

        init(_ settlement: ShardSettlement) {
            self.settlement = settlement
            let sentinel = 987_654_321
            let message = ArraySlice(AuditEngine.replayMessage(sentinel).utf8)
            let at = VerdictMerge.firstIndex(of: Array(String(sentinel).utf8), in: message, from: 0)!
            messageHead = Array(",\"message\":\"".utf8) + message[..<at]
            messageTail = Array(message[(at + String(sentinel).utf8.count)...]) + Array("\"}".utf8)
        }

        func line(_ bytes: ArraySlice<UInt8>, number: Int, file: String, into out: inout [UInt8],
                  outcome: inout Outcome) throws(AuditError) {
            if settlement.isEmpty {
                append(bytes, to: &out)
                return
            }
            if let claim = settlement.overturned[number] {
                // A claim of the merged attempt: its verdict said valid.
                guard let valid = VerdictMerge.lastIndex(of: Self.validMember, in: bytes),
                      bytes[valid...].starts(with: Self.validTrue),
                      let issuer = VerdictMerge.firstIndex(of: Self.issuerMember, in: bytes, from: valid),
                      let message = VerdictMerge.lastIndex(of: Self.messageMember, in: bytes),
                      bytes[message...].elementsEqual(Self.messageNull) else {
                    throw AuditError("\(file): line \(number) is not the valid verdict the replay store lists as the shard's claim: "
                                            + "give each shard's --output with the summary of the same run of the shard")
                }
                out.append(contentsOf: bytes[..<valid])
                JSONText.appendLiteral(",\"valid\":false,\"error\":\"replayed\"", to: &out)
                out.append(contentsOf: bytes[issuer..<message])
                appendMessage(claim.earliest, to: &out)
                out.append(0x0A)
                outcome.settled += 1
                let record = try? JSONObject.parse(Array(bytes))
                outcome.claims[number] = (record?["iss"]?.string, record?["sub"]?.string)
                return
            }
            // A replay that named an overturned claim as the first now names the earliest.
            if bytes.count > messageTail.count + messageHead.count, bytes.suffix(messageTail.count).elementsEqual(messageTail),
               let message = VerdictMerge.lastIndex(of: messageHead, in: bytes) {
                var k = message + messageHead.count, first = 0
                let end = bytes.endIndex - messageTail.count
                while k < end, bytes[k] >= 0x30, bytes[k] <= 0x39, first < Int.max / 10 {
                    first = first * 10 + Int(bytes[k] - 0x30)
                    k += 1
                }
                let earliest = settlement.earliest(first)
                if k == end, earliest != first {
                    out.append(contentsOf: bytes[..<message])
                    appendMessage(earliest, to: &out)
                    out.append(0x0A)
                    outcome.renamed += 1
                    return
                }
            }
            append(bytes, to: &out)
        }

        private func append(_ bytes: ArraySlice<UInt8>, to out: inout [UInt8]) {
            out.append(contentsOf: bytes)
            out.append(0x0A)
        }

        /// `,"message":"…"}` as ``RecordRendering/ndjson(_:into:)`` ends a replayed verdict.
        private func appendMessage(_ first: Int, to out: inout [UInt8]) {
            JSONText.appendLiteral(",\"message\":", to: &out)
            JSONText.appendString(AuditEngine.replayMessage(first), to: &out)
            out.append(0x7D)
        }

        static let validMember = Array(",\"valid\":".utf8)
        static let validTrue = Array(",\"valid\":true,\"error\":null".utf8)
        static let issuerMember = Array(",\"iss\":".utf8)
        static let messageMember = Array(",\"message\":".utf8)
        static let messageNull = Array(",\"message\":null}".utf8)
    }

    static func lastIndex(of pattern: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        var k = bytes.endIndex - pattern.count
        while k >= bytes.startIndex {
            if bytes[k] == pattern[0], bytes[k..<(k + pattern.count)].elementsEqual(pattern) { return k }
            k -= 1
        }
        return nil
    }

    static func firstIndex(of pattern: [UInt8], in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard bytes.endIndex - start >= pattern.count else { return nil }
        for k in start...(bytes.endIndex - pattern.count)
        where bytes[k] == pattern[0] && bytes[k..<(k + pattern.count)].elementsEqual(pattern) {
            return k
        }
        return nil
    }

    /// A binary min-heap of (line, file) pairs: the file whose current line comes next.
    private struct LineHeap {
        private var items: [(line: Int, file: Int)] = []

        mutating func push(_ line: Int, _ file: Int) {
            items.append((line, file))
            var k = items.count - 1
            while k > 0 {
                let parent = (k - 1) / 2
                guard items[k].line < items[parent].line else { break }
                items.swapAt(k, parent)
                k = parent
            }
        }

        mutating func pop() -> (line: Int, file: Int)? {
            guard let top = items.first else { return nil }
            let last = items.removeLast()
            if !items.isEmpty {
                items[0] = last
                var k = 0
                while true {
                    let left = 2 * k + 1, right = left + 1
                    var smallest = k
                    if left < items.count, items[left].line < items[smallest].line { smallest = left }
                    if right < items.count, items[right].line < items[smallest].line { smallest = right }
                    guard smallest != k else { break }
                    items.swapAt(k, smallest)
                    k = smallest
                }
            }
            return top
        }
    }
}
