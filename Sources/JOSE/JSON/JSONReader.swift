#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJOSEShims

/// Why a JSON text was refused, with the byte offset where the reader stopped.
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    /// What was wrong, in words.
    public let reason: String
    /// The byte offset in the document where the reader stopped.
    public let offset: Int
    public var description: String { "\(reason) at byte \(offset)" }
}

/// The kind of a JSON value.
public enum JSONKind: UInt8, Sendable {
    /// `{…}`
    case object
    /// `[…]`
    case array
    /// `"…"`
    case string
    /// A number without a fraction or exponent that fits in 64 bits.
    case integer
    /// Any other number.
    case real
    /// `true`
    case `true`
    /// `false`
    case `false`
    /// `null`
    case null
}

/// One member of an object, as byte ranges into the document, linked to the next member of the same object.
///
/// A document's members form one flat table: each object's members are chained through `next`, and a member
/// whose value is an object points at that object's first member through `firstChild`. Nested objects are
/// therefore indexed by the one pass that validates the document and are never read again.
@usableFromInline
struct JSONMember: Sendable {
    @usableFromInline var keyStart: Int32
    @usableFromInline var keyEnd: Int32
    @usableFromInline var valueStart: Int32
    @usableFromInline var valueEnd: Int32
    @usableFromInline var keyHash: UInt32
    /// The index of the next member of the same object, or -1.
    @usableFromInline var next: Int32
    /// For an object value: the index of its first member, or -1 when it is empty.
    @usableFromInline var firstChild: Int32
    @usableFromInline var kind: JSONKind
    @usableFromInline var keyEscaped: Bool
    @usableFromInline var valueEscaped: Bool
}

/// A strict, single-pass reader for the small JSON objects inside a token (its header and its claims).
///
/// It accepts exactly RFC 8259 JSON encoded as UTF-8 and refuses, like Jansson with `JSON_REJECT_DUPLICATES`:
/// duplicate member names at any depth (compared after unescaping), invalid UTF-8, lone surrogates, `\u0000`,
/// integers outside Int64, reals that overflow, a byte-order mark, and anything after the value. It also
/// refuses nesting deeper than `maxDepth`, and never reads deeper than ``JSONObject/depthCeiling`` whatever
/// `maxDepth` says. The top-level object's members are indexed as byte ranges; values
/// are decoded only when asked for, so checking a token's claims never builds a dictionary or copies the
/// payload into `String`s. The test suite checks it against Jansson on the same bytes.
@usableFromInline
struct JSONReader {
    @usableFromInline let base: UnsafePointer<UInt8>
    @usableFromInline let end: Int
    @usableFromInline var index: Int = 0
    @usableFromInline let maxDepth: Int
    @usableFromInline let plain: UnsafePointer<Bool>
    /// The member table being built (see ``JSONMember``). Members of objects inside arrays are dropped once
    /// their object has been checked, so the table holds the objects reachable through member names only.
    /// It starts in memory the caller lends (usually on its stack, see ``withReader(_:maxDepth:_:)``) and moves
    /// to the heap only when a document has more members than that holds.
    @usableFromInline var table: UnsafeMutablePointer<JSONMember>
    @usableFromInline var count: Int = 0
    @usableFromInline var capacity: Int
    /// True once the table has outgrown the caller's memory and lives on the heap.
    @usableFromInline var tableOnHeap = false

    /// The largest document the reader takes: member offsets are Int32.
    @inlinable static var maxDocumentBytes: Int { Int(Int32.max) }

    /// The member table's starting size on the stack: room for the claims of real tokens (a Firebase ID token
    /// has about twenty members, nested ones included), and at 1 KiB within the size that
    /// `withUnsafeTemporaryAllocation` always places on the stack without asking the runtime.
    @inlinable static var stackTableCapacity: Int { 32 }

    /// A reader over `buffer` that starts its member table in `table` (room for `capacity` members, owned by
    /// the caller). Call ``release()`` when done with it.
    @usableFromInline
    init(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, table: UnsafeMutablePointer<JSONMember>, capacity: Int) {
        // Member offsets are stored as Int32 and converted without checks in the member loop. Every entry point
        // refuses larger documents with an error first (see `maxDocumentBytes`), so this cannot trap.
        precondition(buffer.count <= JSONReader.maxDocumentBytes, "JSON document larger than 2 GiB")
        self.base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.end = buffer.count
        // The reader recurses once per nesting level, so no caller-chosen limit may exceed the ceiling.
        self.maxDepth = min(maxDepth, JSONObject.depthCeiling)
        self.plain = JSONReader.plainStringTable
        self.capacity = capacity
        self.table = table
    }

    /// Runs `body` with a reader over `buffer` whose member table starts on the stack, so that reading a
    /// token's header or claims allocates nothing until a ``JSONDocument`` is made from it.
    @inlinable
    static func withReader<R, E: Error>(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int,
                                        _ body: (inout JSONReader) throws(E) -> R) throws(E) -> R {
        try withUnsafeTemporaryAllocation(of: JSONMember.self, capacity: stackTableCapacity) { stack throws(E) -> R in
            var reader = JSONReader(buffer, maxDepth: maxDepth, table: stack.baseAddress!, capacity: stack.count)
            defer { reader.release() }
            return try body(&reader)
        }
    }

    /// Frees the table if it moved to the heap.
    @usableFromInline
    func release() { if tableOnHeap { table.deallocate() } }

    @inline(__always) @usableFromInline
    mutating func append(_ member: JSONMember) -> Int {
        if count == capacity { grow() }
        (table + count).initialize(to: member)
        count += 1
        return count - 1
    }

    @inline(never) @usableFromInline
    mutating func grow() {
        let grown = UnsafeMutablePointer<JSONMember>.allocate(capacity: max(capacity * 2, 8))
        grown.moveInitialize(from: table, count: count)
        if tableOnHeap { table.deallocate() }
        table = grown
        tableOnHeap = true
        capacity = max(capacity * 2, 8)
    }

    @usableFromInline
    func fail(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(reason: reason, offset: index) }

    @inline(__always) @usableFromInline
    mutating func skipWhitespace() {
        Self.skipWhitespace(base, end, &index)
    }

    /// Moves `i` past JSON whitespace in `base[..<end]`: for the member loop, which keeps its position in a local.
    @inline(__always) @usableFromInline
    static func skipWhitespace(_ base: UnsafePointer<UInt8>, _ end: Int, _ i: inout Int) {
        while i < end {
            let c = base[i]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i &+= 1 } else { return }
        }
    }

    /// Reads a whole document that must be one object; returns the index of its first member (-1 if empty).
    @usableFromInline
    mutating func readTopLevelObject() throws(JSONSyntaxError) -> Int32 {
        skipWhitespace()
        guard index < end, base[index] == UInt8(ascii: "{") else { throw fail("expected a JSON object") }
        let first = try readObject(depth: 1)
        skipWhitespace()
        guard index == end else { throw fail("unexpected data after the JSON value") }
        return first
    }

    /// Reads any value at `index` inside a container at level `depth`; returns its kind and whether a string
    /// held escapes.
    ///
    /// Every value counts as a level, scalars included (in `{"a":[1]}` the object is level 1, the array 2 and
    /// the 1 level 3), which is how Jansson counts: with the same limit, both readers accept the same documents.
    @usableFromInline
    mutating func readValue(depth: Int) throws(JSONSyntaxError) -> (JSONKind, Bool) {
        var firstChild: Int32 = -1
        return try readValue(depth: depth, firstChild: &firstChild)
    }

    /// Reads any value; for an object, `firstChild` receives the index of its first member in the table.
    @usableFromInline
    mutating func readValue(depth: Int, firstChild: inout Int32) throws(JSONSyntaxError) -> (JSONKind, Bool) {
        guard index < end else { throw fail("unexpected end of JSON") }
        guard depth < maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        switch base[index] {
        case UInt8(ascii: "\""):
            let escaped = try readString()
            return (.string, escaped)
        case UInt8(ascii: "{"):
            firstChild = try readObject(depth: depth + 1)
            return (.object, false)
        case UInt8(ascii: "["):
            try readArray(depth: depth + 1)
            return (.array, false)
        case UInt8(ascii: "t"):
            try expectLiteral(0x74_72_75_65, length: 4)
            return (.true, false)
        case UInt8(ascii: "f"):
            guard end - index >= 5, base[index + 4] == UInt8(ascii: "e") else { throw fail("invalid literal") }
            try expectLiteral(0x66_61_6C_73, length: 4)
            index += 1
            return (.false, false)
        case UInt8(ascii: "n"):
            try expectLiteral(0x6E_75_6C_6C, length: 4)
            return (.null, false)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return (try readNumber(), false)
        default:
            throw fail("invalid JSON value")
        }
    }

    @inline(__always) @usableFromInline
    mutating func expectLiteral(_ word: UInt32, length: Int) throws(JSONSyntaxError) {
        guard end - index >= length else { throw fail("invalid literal") }
        let got = UInt32(base[index]) << 24 | UInt32(base[index + 1]) << 16 | UInt32(base[index + 2]) << 8 | UInt32(base[index + 3])
        guard got == word else { throw fail("invalid literal") }
        index += length
    }

    /// Reads an object at `index` and links its members into the table; returns its first member's index.
    @usableFromInline
    mutating func readObject(depth: Int) throws(JSONSyntaxError) -> Int32 {
        // The position is kept in a local, and `base` and `end` too, so that the member loop works in registers:
        // `index` is written back only around the calls that read or move it (escaped strings, nested values)
        // and before each refusal, whose offset it gives.
        let base = self.base, end = self.end
        var i = index &+ 1  // {
        if i < end, base[i] <= 0x20 { Self.skipWhitespace(base, end, &i) }
        if i < end, base[i] == UInt8(ascii: "}") {
            index = i &+ 1
            return -1
        }
        var first: Int32 = -1
        var last = -1
        // One bit per name hash: a name whose bit is clear cannot repeat an earlier one, so most members skip
        // the walk over their siblings.
        var seen: UInt64 = 0
        // readValue's depth check, hoisted for the string fast path below: a member value is at level `depth`.
        let stringsAllowed = depth < maxDepth
        while true {
            if i < end, base[i] <= 0x20 { Self.skipWhitespace(base, end, &i) }
            guard i < end, base[i] == UInt8(ascii: "\"") else {
                index = i
                throw fail("expected a member name")
            }
            let keyStart = i &+ 1
            let keyEscaped: Bool
            let keyEnd: Int
            let hash: UInt32
            if let (length, nameHash) = Self.plainName(base, end, at: keyStart) {
                // Most names are plain ASCII under sixteen bytes: the words that found the closing quote also
                // give the hash (the same value fnv computes), without a call to readString.
                keyEscaped = false
                keyEnd = keyStart &+ length
                i = keyEnd &+ 1
                hash = nameHash
            } else {
                index = i
                keyEscaped = try readString()
                i = index
                keyEnd = i &- 1
                hash = keyEscaped ? hashEscapedKey(keyStart, keyEnd)
                                  : UInt32(truncatingIfNeeded: Self.fnv(base + keyStart, keyEnd &- keyStart, readable: end &- keyStart))
            }
            let bit: UInt64 = 1 << UInt64(hash & 63)
            if seen & bit != 0 {
                var k = Int(first)
                while k >= 0 {
                    if table[k].keyHash == hash, keysEqual(table[k], keyStart, keyEnd, keyEscaped) {
                        index = i
                        throw JSONSyntaxError(reason: "duplicate object member", offset: keyStart - 1)
                    }
                    k = Int(table[k].next)
                }
            }
            seen |= bit
            if i < end, base[i] <= 0x20 { Self.skipWhitespace(base, end, &i) }
            guard i < end, base[i] == UInt8(ascii: ":") else {
                index = i
                throw fail("expected ':'")
            }
            i &+= 1
            if i < end, base[i] <= 0x20 { Self.skipWhitespace(base, end, &i) }
            let valueStart = i
            var firstChild: Int32 = -1
            let kind: JSONKind
            var valueEscaped = false
            if stringsAllowed, i < end, base[i] == UInt8(ascii: "\"") {
                // Most values are strings: read them here, without the dispatch in readValue or a call. Plain
                // bytes are skipped sixteen at a time; anything else (an escape, a non-ASCII byte, a control
                // character, or the last fifteen bytes of the document) goes through readString(from:).
                kind = .string
                i &+= 1
                while true {
                    if end &- i >= 16 {
                        let plainCount = Int(idtk_first_string_special16(base + i))
                        i &+= plainCount
                        if plainCount == 16 { continue }
                        if base[i] == UInt8(ascii: "\"") {
                            i &+= 1
                            break
                        }
                    }
                    // The rest of the string the general way, from the byte that needs attention.
                    valueEscaped = try readString(from: i)
                    i = index
                    break
                }
            } else {
                index = i
                (kind, valueEscaped) = try readValue(depth: depth, firstChild: &firstChild)
                i = index
            }
            // The member is stored once, complete, after its value: an object value's own members therefore
            // come before it in the table, which nothing depends on (members are reached through links only).
            // Offsets fit in Int32 (checked once in init).
            let slot = append(JSONMember(keyStart: Int32(truncatingIfNeeded: keyStart), keyEnd: Int32(truncatingIfNeeded: keyEnd),
                                         valueStart: Int32(truncatingIfNeeded: valueStart), valueEnd: Int32(truncatingIfNeeded: i),
                                         keyHash: hash, next: -1, firstChild: firstChild, kind: kind,
                                         keyEscaped: keyEscaped, valueEscaped: valueEscaped))
            if last >= 0 { table[last].next = Int32(truncatingIfNeeded: slot) } else { first = Int32(truncatingIfNeeded: slot) }
            last = slot
            if i < end, base[i] <= 0x20 { Self.skipWhitespace(base, end, &i) }
            guard i < end else {
                index = i
                throw fail("unexpected end of JSON in an object")
            }
            let c = base[i]
            if c == UInt8(ascii: ",") {
                i &+= 1
                continue
            }
            if c == UInt8(ascii: "}") {
                index = i &+ 1
                break
            }
            index = i
            throw fail("expected ',' or '}'")
        }
        return first
    }

    /// The rest of a string from `position`: the byte after its opening quote, or (from the member loop's own
    /// skip of plain bytes) a byte that needs attention or one of the document's last fifteen. Leaves `index`
    /// after the closing quote; returns whether the string holds escapes.
    @inline(never) @usableFromInline
    mutating func readString(from position: Int) throws(JSONSyntaxError) -> Bool {
        index = position
        var escaped = false
        while true {
            // Most string bytes are plain printable ASCII: skip them sixteen at a time (SSE2 or NEON) while
            // sixteen can be read, then one at a time.
            if end &- index >= 16 {
                let plainCount = Int(idtk_first_string_special16(base + index))
                index &+= plainCount
                if plainCount == 16 { continue }
            } else {
                while index < end, plain[Int(base[index])] { index &+= 1 }
                guard index < end else { break }
            }
            let c = base[index]
            if c == UInt8(ascii: "\"") {
                index &+= 1
                return escaped
            }
            if c == UInt8(ascii: "\\") {
                escaped = true
                try readEscape()
            } else if c < 0x20 {
                throw fail("control character in a string")
            } else {
                // The skip above stops only at '"', '\\', control characters and non-ASCII bytes: c >= 0x80.
                try readUTF8Sequence()
            }
        }
        throw fail("unterminated string")
    }

    @usableFromInline
    mutating func readArray(depth: Int) throws(JSONSyntaxError) {
        index += 1  // [
        skipWhitespace()
        if index < end, base[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        // Objects inside arrays are checked (duplicates, depth) but not indexed: their members are dropped.
        let frame = count
        while true {
            skipWhitespace()
            _ = try readValue(depth: depth)
            count = frame
            skipWhitespace()
            guard index < end else { throw fail("unexpected end of JSON in an array") }
            let c = base[index]
            index += 1
            if c == UInt8(ascii: ",") { continue }
            if c == UInt8(ascii: "]") { return }
            index -= 1
            throw fail("expected ',' or ']'")
        }
    }

    /// Reads a string starting at its opening quote; leaves `index` after the closing quote.
    /// Returns whether it contains escapes.
    @inline(__always) @usableFromInline
    mutating func readString() throws(JSONSyntaxError) -> Bool {
        try readString(from: index &+ 1)
    }

    @usableFromInline
    mutating func readEscape() throws(JSONSyntaxError) {
        guard end - index >= 2 else { throw fail("unterminated escape") }
        switch base[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
             UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 2
        case UInt8(ascii: "u"):
            index += 2
            let unit = try readHex4()
            if unit == 0 { throw fail("\\u0000 is not allowed") }
            if unit >= 0xD800 && unit <= 0xDBFF {
                guard end - index >= 6, base[index] == UInt8(ascii: "\\"), base[index + 1] == UInt8(ascii: "u") else {
                    throw fail("lone high surrogate")
                }
                index += 2
                let low = try readHex4()
                guard low >= 0xDC00 && low <= 0xDFFF else { throw fail("high surrogate not followed by a low surrogate") }
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                throw fail("lone low surrogate")
            }
        default:
            throw fail("invalid escape")
        }
    }

    @usableFromInline
    mutating func readHex4() throws(JSONSyntaxError) -> UInt32 {
        guard end - index >= 4 else { throw fail("truncated \\u escape") }
        var value: UInt32 = 0
        for k in 0..<4 {
            guard let digit = Self.hexValue(base[index + k]) else { throw fail("invalid \\u escape") }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    /// Bytes that stand for themselves inside a JSON string: printable ASCII other than `"` and `\`.
    /// Allocated once for the life of the process; the reader keeps the pointer so the hot loop never goes
    /// through a lazy global's accessor.
    @usableFromInline nonisolated(unsafe) static let plainStringTable: UnsafePointer<Bool> = {
        let table = UnsafeMutablePointer<Bool>.allocate(capacity: 256)
        for byte in 0..<256 { table[byte] = byte >= 0x20 && byte < 0x80 && byte != 0x22 && byte != 0x5C }
        return UnsafePointer(table)
    }()

    @inline(__always) @usableFromInline
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Well-formed UTF-8 per Unicode table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF.
    @usableFromInline
    mutating func readUTF8Sequence() throws(JSONSyntaxError) {
        let c0 = base[index]
        let remaining = end - index
        @inline(__always) func cont(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }
        switch c0 {
        case 0xC2...0xDF:
            guard remaining >= 2, cont(base[index + 1]) else { throw fail("invalid UTF-8") }
            index += 2
        case 0xE0...0xEF:
            guard remaining >= 3 else { throw fail("invalid UTF-8") }
            let c1 = base[index + 1]
            let lowOK: Bool
            switch c0 {
            case 0xE0: lowOK = c1 >= 0xA0 && c1 <= 0xBF
            case 0xED: lowOK = c1 >= 0x80 && c1 <= 0x9F
            default: lowOK = cont(c1)
            }
            guard lowOK, cont(base[index + 2]) else { throw fail("invalid UTF-8") }
            index += 3
        case 0xF0...0xF4:
            guard remaining >= 4 else { throw fail("invalid UTF-8") }
            let c1 = base[index + 1]
            let lowOK: Bool
            switch c0 {
            case 0xF0: lowOK = c1 >= 0x90 && c1 <= 0xBF
            case 0xF4: lowOK = c1 >= 0x80 && c1 <= 0x8F
            default: lowOK = cont(c1)
            }
            guard lowOK, cont(base[index + 2]), cont(base[index + 3]) else { throw fail("invalid UTF-8") }
            index += 4
        default:
            throw fail("invalid UTF-8")
        }
    }

    @usableFromInline
    mutating func readNumber() throws(JSONSyntaxError) -> JSONKind {
        let start = index
        // Most numbers in tokens are NumericDates: a positive integer of ten digits. Up to fifteen digits not
        // followed by a fraction or an exponent are read eight at a time (and fit any Int64).
        if end &- index >= 16, base[index] != UInt8(ascii: "0"), base[index] != UInt8(ascii: "-") {
            var digits = JSONReader.leadingDigits(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            if digits == 8 {
                digits &+= JSONReader.leadingDigits(UnsafeRawPointer(base + (index &+ 8)).loadUnaligned(as: UInt64.self))
            }
            let next = base[index &+ digits]
            if digits < 16, next != UInt8(ascii: "."), next != UInt8(ascii: "e"), next != UInt8(ascii: "E") {
                // The caller dispatched on a digit or '-', and '-' and '0' went the long way: digits >= 1.
                index &+= digits
                return .integer
            }
        }
        if base[index] == UInt8(ascii: "-") { index += 1 }
        guard index < end else { throw fail("invalid number") }
        if base[index] == UInt8(ascii: "0") {
            index += 1
        } else if base[index] >= UInt8(ascii: "1") && base[index] <= UInt8(ascii: "9") {
            while index < end, base[index] >= UInt8(ascii: "0"), base[index] <= UInt8(ascii: "9") { index += 1 }
        } else {
            throw fail("invalid number")
        }
        var isReal = false
        if index < end, base[index] == UInt8(ascii: ".") {
            isReal = true
            index += 1
            let digits = index
            while index < end, base[index] >= UInt8(ascii: "0"), base[index] <= UInt8(ascii: "9") { index += 1 }
            guard index > digits else { throw fail("invalid number") }
        }
        if index < end, base[index] == UInt8(ascii: "e") || base[index] == UInt8(ascii: "E") {
            isReal = true
            index += 1
            if index < end, base[index] == UInt8(ascii: "+") || base[index] == UInt8(ascii: "-") { index += 1 }
            let digits = index
            while index < end, base[index] >= UInt8(ascii: "0"), base[index] <= UInt8(ascii: "9") { index += 1 }
            guard index > digits else { throw fail("invalid number") }
        }
        let span = UnsafeBufferPointer(start: base + start, count: index - start)
        if isReal {
            guard JSONReader.parseReal(span) != nil else { throw JSONSyntaxError(reason: "real number overflow", offset: start) }
            return .real
        }
        // Eighteen digits or fewer always fit in an Int64; only longer literals need the overflow check.
        guard span.count <= 18 || JSONReader.parseInteger(span) != nil else {
            throw JSONSyntaxError(reason: "integer out of range", offset: start)
        }
        return .integer
    }

    /// The number of ASCII digits (0...8) at the start of the eight bytes in `word` (the first byte lowest).
    /// A byte is flagged when it is not a digit: after `^ 0x30` a digit is 0...9, and adding 0x76 sets the high
    /// bit of anything from 0x0A up; a carry out of a flagged byte can only flag bytes above it.
    @inline(__always) @usableFromInline
    static func leadingDigits(_ word: UInt64) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let shifted = word ^ (ones &* 0x30)
        let flagged = ((shifted &+ ones &* 0x76) | shifted) & (ones &* 0x80)
        return flagged == 0 ? 8 : flagged.trailingZeroBitCount >> 3
    }

    /// The value of eight ASCII digits in `word` (the first, most significant digit in the lowest byte):
    /// neighbouring digits combined into pairs, the pairs into fours, the fours into eight.
    @inline(__always) @usableFromInline
    static func eightDigitsValue(_ word: UInt64) -> Int64 {
        var w = word & 0x0F0F_0F0F_0F0F_0F0F
        w = (w &* 10 &+ (w >> 8)) & 0x00FF_00FF_00FF_00FF
        w = (w &* 100 &+ (w >> 16)) & 0x0000_FFFF_0000_FFFF
        w = (w &* 10_000 &+ (w >> 32)) & 0xFFFF_FFFF
        return Int64(truncatingIfNeeded: w)
    }

    /// A validated integer literal as Int64; nil on overflow.
    @usableFromInline
    static func parseInteger(_ span: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        let negative = span[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        if span.count <= 18 {
            // At most eighteen digits: no overflow possible (NumericDates have ten), so no checks. Eight digits
            // at a time while eight remain.
            var value: Int64 = 0
            while span.count &- i >= 8 {
                let word = UnsafeRawPointer(span.baseAddress! + i).loadUnaligned(as: UInt64.self)
                value = value &* 100_000_000 &+ eightDigitsValue(UInt64(littleEndian: word))
                i &+= 8
            }
            while i < span.count {
                value = value &* 10 &+ Int64(span[i] &- UInt8(ascii: "0"))
                i += 1
            }
            return negative ? 0 &- value : value
        }
        var value: Int64 = 0
        while i < span.count {
            let digit = Int64(span[i] &- UInt8(ascii: "0"))
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = negative ? m.subtractingReportingOverflow(digit) : m.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            value = s
            i += 1
        }
        return value
    }

    /// A validated real literal as Double; nil when it overflows to infinity.
    @usableFromInline
    static func parseReal(_ span: UnsafeBufferPointer<UInt8>) -> Double? {
        let value: Double = withUnsafeTemporaryAllocation(of: CChar.self, capacity: span.count + 1) { buffer in
            for k in 0..<span.count { buffer[k] = CChar(bitPattern: span[k]) }
            buffer[span.count] = 0
            return strtod(buffer.baseAddress!, nil)
        }
        return value.isFinite ? value : nil
    }

    /// Marks (high bit of the byte) every byte of `word` that needs attention inside a string: `"`, `\`, a
    /// control character, or a non-ASCII byte. Borrows can only mark bytes above a true match, so the lowest
    /// mark is exact, which is the only one the reader uses.
    @inline(__always) @usableFromInline
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let quoteHit = (quote &- ones) & ~quote
        let backslashHit = (backslash &- ones) & ~backslash
        let controlHit = (word &- ones &* 0x20) & ~word
        return (quoteHit | backslashHit | controlHit | word) & (ones &* 0x80)
    }

    /// The hash used for member names and kids: eight bytes per step, then the tail. Only needs to spread
    /// names well enough that unequal names rarely share a hash; equal hashes are always confirmed by bytes.
    @inline(__always) @usableFromInline
    static func fnv(_ p: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(truncatingIfNeeded: count)
        var i = 0
        while count - i >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
            h = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < count {
            tail |= UInt64(p[i]) << shift
            shift += 8
            i += 1
        }
        h = (h ^ tail) &* 0x9E37_79B9_7F4A_7C15
        return h ^ (h >> 32)
    }

    /// The 32-bit hash a member name is indexed under (of its unescaped bytes).
    @inlinable
    static func keyHash(_ name: UnsafeBufferPointer<UInt8>) -> UInt32 {
        UInt32(truncatingIfNeeded: fnv(name.baseAddress ?? UnsafePointer(bitPattern: 1)!, name.count))
    }

    /// When the string body at `start` is plain printable ASCII shorter than sixteen bytes and sixteen bytes
    /// (eight for a name under eight) can be read there: its length and its ``fnv(_:_:)`` hash, from the one
    /// or two words that found the closing quote.
    @inline(__always) @usableFromInline
    static func plainName(_ base: UnsafePointer<UInt8>, _ end: Int, at start: Int) -> (Int, UInt32)? {
        guard end &- start >= 8 else { return nil }
        let word = UInt64(littleEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
        let special = JSONReader.specialBytes(word)
        if special != 0 {
            let length = special.trailingZeroBitCount >> 3
            // The first byte needing attention must be the closing quote, not an escape or a non-ASCII byte.
            guard base[start &+ length] == UInt8(ascii: "\"") else { return nil }
            return (length, JSONReader.shortHash(word, length))
        }
        // Eight plain bytes: names such as auth_time, email_verified, nonce_supported end in the next word.
        guard end &- start >= 16 else { return nil }
        let next = UInt64(littleEndian: UnsafeRawPointer(base + (start &+ 8)).loadUnaligned(as: UInt64.self))
        let nextSpecial = JSONReader.specialBytes(next)
        guard nextSpecial != 0 else { return nil }
        let rest = nextSpecial.trailingZeroBitCount >> 3
        guard base[start &+ 8 &+ rest] == UInt8(ascii: "\"") else { return nil }
        return (8 &+ rest, JSONReader.mediumHash(word, next, rest))
    }

    /// ``fnv(_:_:)`` of a name of `length` (0...7) bytes held in the low bytes of `word`.
    @inline(__always) @usableFromInline
    static func shortHash(_ word: UInt64, _ length: Int) -> UInt32 {
        let h0: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(truncatingIfNeeded: length)
        let tail = length == 0 ? 0 : word & (UInt64.max >> UInt64(64 &- 8 &* length))
        let h = (h0 ^ tail) &* 0x9E37_79B9_7F4A_7C15
        return UInt32(truncatingIfNeeded: h ^ (h >> 32))
    }

    /// ``fnv(_:_:)`` of a name of 8 + `rest` (rest 0...7) bytes: eight in `word`, the rest in the low bytes of
    /// `next`. One step of fnv's word loop, then its tail.
    @inline(__always) @usableFromInline
    static func mediumHash(_ word: UInt64, _ next: UInt64, _ rest: Int) -> UInt32 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(truncatingIfNeeded: 8 &+ rest)
        h = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        let tail = rest == 0 ? 0 : next & (UInt64.max >> UInt64(64 &- 8 &* rest))
        h = (h ^ tail) &* 0x9E37_79B9_7F4A_7C15
        return UInt32(truncatingIfNeeded: h ^ (h >> 32))
    }

    /// ``fnv(_:_:)`` for bytes followed by at least `readable - count` more readable bytes: when eight bytes
    /// can be read from where the tail starts, the tail is one load and a mask instead of a byte loop. Same
    /// value as ``fnv(_:_:)``. (Member names are short and always followed by at least `":` and a value.)
    @inline(__always) @usableFromInline
    static func fnv(_ p: UnsafePointer<UInt8>, _ count: Int, readable: Int) -> UInt64 {
        let tailStart = count & ~7
        guard readable - tailStart >= 8 else { return fnv(p, count) }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(truncatingIfNeeded: count)
        var i = 0
        while i < tailStart {
            let word = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
            h = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
            i += 8
        }
        let rest = count - tailStart
        let word = UInt64(littleEndian: UnsafeRawPointer(p + tailStart).loadUnaligned(as: UInt64.self))
        // rest is 0...7: keep its low `rest` bytes (none when rest is 0, as the byte loop would).
        let tail = rest == 0 ? 0 : word & (UInt64.max >> UInt64(64 - 8 * rest))
        h = (h ^ tail) &* 0x9E37_79B9_7F4A_7C15
        return h ^ (h >> 32)
    }

    @usableFromInline
    func hashEscapedKey(_ start: Int, _ end: Int) -> UInt32 {
        let decoded = JSONReader.unescape(UnsafeBufferPointer(start: base + start, count: end - start))
        return decoded.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: JSONReader.fnv($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count)) }
    }

    @usableFromInline
    func keysEqual(_ member: JSONMember, _ start: Int, _ end: Int, _ escaped: Bool) -> Bool {
        let a = UnsafeBufferPointer(start: base + Int(member.keyStart), count: Int(member.keyEnd - member.keyStart))
        let b = UnsafeBufferPointer(start: base + start, count: end - start)
        if !member.keyEscaped && !escaped { return a.elementsEqual(b) }
        let da = member.keyEscaped ? JSONReader.unescape(a) : Array(a)
        let db = escaped ? JSONReader.unescape(b) : Array(b)
        return da == db
    }

    /// Decodes the escapes of a validated string body into UTF-8 bytes.
    @usableFromInline
    static func unescape(_ body: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(body.count)
        var i = 0
        func hex4(_ at: Int) -> UInt32 {
            var v: UInt32 = 0
            for k in 0..<4 { v = v << 4 | UInt32(hexValue(body[at + k]) ?? 0) }
            return v
        }
        while i < body.count {
            let c = body[i]
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                i += 1
                continue
            }
            let e = body[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(i)
                i += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    let low = hex4(i + 2)
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                appendUTF8(scalar, to: &out)
            default: out.append(e)  // \" \\ \/
            }
        }
        return out
    }

    @usableFromInline
    static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
