import IDTokenKit
import JOSE

/// Reads the usual JSON record line — `{"id":"req-1","at":1767268800,"token":"eyJ…"}` — in one pass over its
/// bytes, without the general JSON reader: no copy of the line, no member table, and the token's text (most of
/// the line) checked eight bytes at a time.
///
/// It answers only for lines it can read exactly as ``RecordExtractor`` reads them with the strict JSON reader:
/// an object whose members are `id`, `at`, `token` and `nonce` (each at most once, `token` present), written
/// without escapes, with string values of printable ASCII (`"` and `\` excepted), and numbers that are plain
/// integers of at most 15 digits; spaces and tabs may surround the punctuation. Anything else (another member, an
/// escape, a fraction, `null`, a nested value, a duplicate, bad JSON, an `at` that is not a time…) returns nil,
/// and the line goes to the strict reader, which gives the verdict and the message. So the fast path never
/// accepts a line the strict reader refuses, and reads the same record from every line it accepts.
enum JSONRecordScanner {
    struct Fields {
        var id: RecordID?
        /// Where the token's text lies in the scanned bytes.
        var token: Range<Int>
        var at: Double?
        var nonce: String?
    }

    /// The record's fields, or nil when the line is not of the usual shape (see the type's description).
    /// `bytes` starts with `{` and ends with the line's last non-blank byte.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Fields? {
        guard let base = bytes.baseAddress else { return nil }
        let end = bytes.count
        var i = 1
        var id: RecordID?, token: Range<Int>?, at: Double?, nonce: String?
        var seen: UInt8 = 0
        @inline(__always) func skipSpaces() {
            while i < end, base[i] == 0x20 || base[i] == 0x09 { i += 1 }
        }
        while true {
            skipSpaces()
            guard i < end, base[i] == 0x22 else { return nil }
            // The member's name: one of the four, without escapes.
            guard let nameEnd = plainStringEnd(base, from: i + 1, end: end) else { return nil }
            let member = Member(base + i + 1, count: nameEnd - i - 1)
            guard member != .other, seen & member.rawValue == 0 else { return nil }
            seen |= member.rawValue
            i = nameEnd + 1
            skipSpaces()
            guard i < end, base[i] == 0x3A else { return nil }
            i += 1
            skipSpaces()
            guard i < end else { return nil }
            if base[i] == 0x22 {
                guard let valueEnd = plainStringEnd(base, from: i + 1, end: end) else { return nil }
                let text = UnsafeBufferPointer(start: base + i + 1, count: valueEnd - i - 1)
                switch member {
                case .id: id = .string(String(decoding: text, as: UTF8.self))
                case .token: token = (i + 1)..<valueEnd
                case .nonce: nonce = String(decoding: text, as: UTF8.self)
                case .at:
                    guard let seconds = UnixTime.parse(bytes: text) else { return nil }
                    at = seconds
                case .other: return nil
                }
                i = valueEnd + 1
            } else {
                let start = i
                guard let value = plainInteger(base, at: &i, end: end) else { return nil }
                switch member {
                case .id: id = .json(String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self))
                case .at:
                    guard let seconds = UnixTime.plausible(Double(value)) else { return nil }
                    at = seconds
                case .token, .nonce, .other: return nil
                }
            }
            skipSpaces()
            guard i < end else { return nil }
            if base[i] == 0x2C {
                i += 1
                continue
            }
            guard base[i] == 0x7D, i + 1 == end, let token else { return nil }
            return Fields(id: id, token: token, at: at, nonce: nonce)
        }
    }

    /// The members the fast path reads, one bit each.
    private enum Member: UInt8 {
        case id = 1, at = 2, token = 4, nonce = 8, other = 0

        init(_ name: UnsafePointer<UInt8>, count: Int) {
            switch count {
            case 2 where name[0] == 0x69 && name[1] == 0x64: self = .id                       // id
            case 2 where name[0] == 0x61 && name[1] == 0x74: self = .at                       // at
            case 5 where UnsafeRawPointer(name).loadUnaligned(as: UInt32.self) == 0x656B_6F74 && name[4] == 0x6E:
                self = .token                                                                 // token
            case 5 where UnsafeRawPointer(name).loadUnaligned(as: UInt32.self) == 0x636E_6F6E && name[4] == 0x65:
                self = .nonce                                                                 // nonce
            default: self = .other
            }
        }
    }

    /// The index of the `"` closing a string whose text starts at `start`, when every byte before it is
    /// printable ASCII other than `\` (0x20–0x7E): such a string is valid JSON and reads as its bytes. nil when
    /// another byte comes first (an escape, a control character, UTF-8, DEL) or the line ends.
    ///
    /// One pass, sixteen bytes a vector compare (``ByteSearch/plainStringRunEnd(in:from:to:)``): the token is
    /// most of the line.
    static func plainStringEnd(_ base: UnsafePointer<UInt8>, from start: Int, end: Int) -> Int? {
        let stop = ByteSearch.plainStringRunEnd(in: base, from: start, to: end)
        guard stop < end, base[stop] == 0x22 else { return nil }
        return stop
    }

    /// A JSON integer of at most 15 digits (`-`, then `0` or a digit 1–9 and more digits) starting at `i`, read
    /// up to the first byte after it; nil for anything else (a fraction, an exponent, more digits, a word).
    static func plainInteger(_ base: UnsafePointer<UInt8>, at i: inout Int, end: Int) -> Int64? {
        var k = i
        let negative = k < end && base[k] == 0x2D
        if negative { k += 1 }
        let first = k
        var value: Int64 = 0
        while k < end, base[k] &- 0x30 < 10 {
            value = value &* 10 &+ Int64(base[k] &- 0x30)     // wraps only past 18 digits, refused below
            k += 1
        }
        let digits = k - first
        guard digits >= 1, digits <= 15, digits == 1 || base[first] != 0x30 else { return nil }
        if k < end {
            let next = base[k]
            // A fraction or an exponent is left to the strict reader; so is anything but the end of the value.
            guard next == 0x2C || next == 0x7D || next == 0x20 || next == 0x09 else { return nil }
        }
        i = k
        return negative ? -value : value
    }
}
