/// Times as text: the one formatter of times people read (ISO 8601 UTC, whole seconds) and the one parser of
/// times people give (``parse(_:)``).
public enum UnixTime {
    /// `2025-03-01T12:00:00Z` (whole seconds, rounded down), or with `basic` the compact `20250301T120000Z` used in
    /// archive file names. A time outside years 1–9999, or not finite, is written as the number itself.
    public static func iso8601(_ time: Double, basic: Bool = false) -> String {
        guard time.isFinite, time >= earliest, time < latest + 1 else { return "\(time)" }
        let total = Int(time.rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secs = total - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        // Written digit by digit into a stack buffer: refusal messages quote two times each, and an audit writes
        // a message for every refused token.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer -> String in
            var n = 0
            func digits(_ value: Int, _ width: Int) {
                var value = value
                for k in stride(from: width - 1, through: 0, by: -1) {
                    buffer[n + k] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                n += width
            }
            func separator(_ byte: UInt8) {
                guard !basic else { return }
                buffer[n] = byte
                n += 1
            }
            digits(y, 4)
            separator(UInt8(ascii: "-"))
            digits(m, 2)
            separator(UInt8(ascii: "-"))
            digits(d, 2)
            buffer[n] = UInt8(ascii: "T")
            n += 1
            digits(secs / 3600, 2)
            separator(UInt8(ascii: ":"))
            digits(secs / 60 % 60, 2)
            separator(UInt8(ascii: ":"))
            digits(secs % 60, 2)
            buffer[n] = UInt8(ascii: "Z")
            n += 1
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<n]), as: UTF8.self)
        }
    }

    /// `1616067537 (2021-03-18T11:38:57Z)`: a time as a number of whole seconds and as people read it, for
    /// rejection messages. Fractions are dropped (rounded down, as ``iso8601(_:basic:)`` does): a person reads
    /// seconds, and the time of verification is rarely a whole second.
    static func describe(_ time: Double) -> String {
        "\(text(time)) (\(iso8601(time)))"
    }

    /// A time as whole Unix seconds (rounded down), the one way times are written as numbers for people.
    public static func text(_ time: Double) -> String {
        guard time.isFinite, abs(time) < 1e15 else { return "\(time)" }
        return "\(Int64(time.rounded(.down)))"
    }

    /// 0001-01-01T00:00:00Z, the earliest time written or read as a date.
    public static let earliest: Double = -62_135_596_800
    /// 9999-12-31T23:59:59Z, the latest time IDTokenKit reads or writes as a date: no token is dated later
    /// (`NumericDate`), times given as text may not be later, and replay stores clamp expiries to it.
    public static let latest: Double = 253_402_300_799

    /// Reads a time given as text, the one parser for `--at`, a record's `at` and a configuration's `at`:
    ///
    /// - Unix seconds: digits with an optional fraction (`1700000000`, `1700000000.5`);
    /// - RFC 3339 / ISO 8601: `2025-03-01T12:00:00Z`, with `t` or a space in place of `T` (RFC 3339 §5.6 allows
    ///   the space, and logs write times that way), an optional fraction (`.` or `,`), and `Z`, `±HH:MM` or
    ///   `±HHMM` — or no offset, read as UTC;
    /// - the basic form `20250301T120000Z` of archive file names.
    ///
    /// Times before 1970 or after ``latest`` are refused (nil): no token is judged then.
    public static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// ``parse(_:)`` over bytes, without a String.
    package static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        if let seconds = unixSeconds(bytes) { return seconds }
        guard let (seconds, length) = dateTimePrefix(bytes), length == bytes.count else { return nil }
        return seconds
    }

    /// A number of Unix seconds, kept when it lies between 1970 and ``latest``.
    public static func plausible(_ seconds: Double) -> Double? {
        seconds.isFinite && seconds >= 0 && seconds <= latest ? seconds : nil
    }

    /// Reads a command-line or configuration time, with the one message for a time that is not one.
    /// - Parameters:
    ///   - text: Unix seconds or an RFC 3339 time.
    ///   - option: how the user named it (`--at`, `"at"`).
    public static func argument(_ text: String, option: String) throws(ConfigurationError) -> Double {
        guard let seconds = parse(text) else {
            throw ConfigurationError("\(option) must be Unix seconds or an RFC 3339 time such as 2026-01-01T00:00:00Z or 2026-01-01 00:00:00 (UTC without an offset), between 1970 and the year 9999, not \"\(text)\"")
        }
        return seconds
    }

    static func unixSeconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let first = bytes.first, first >= 0x30, first <= 0x39, bytes.count <= 24 else { return nil }
        var sawDot = false
        for byte in bytes where !(byte >= 0x30 && byte <= 0x39) {
            guard byte == 0x2E, !sawDot else { return nil }
            sawDot = true
        }
        guard bytes.last != 0x2E, let value = Double(String(decoding: bytes, as: UTF8.self)) else { return nil }
        return plausible(value)
    }

    /// A date-time at the start of `bytes` (the forms of ``parse(_:)`` but Unix seconds); the time and how many
    /// bytes it took. Audit records use it for the time that starts a log line.
    package static func dateTimePrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> (seconds: Double, length: Int)? {
        var reader = DigitReader(bytes)
        guard let year = reader.number(4) else { return nil }
        let extended = reader.skip(0x2D)
        guard let month = reader.number(2), !extended || reader.skip(0x2D), let day = reader.number(2) else { return nil }
        guard reader.skip(0x54) || reader.skip(0x74) || (extended && reader.skip(0x20)) else { return nil }
        guard let hour = reader.number(2), !extended || reader.skip(0x3A), let minute = reader.number(2),
              !extended || reader.skip(0x3A), let second = reader.number(2) else { return nil }
        var fraction = 0.0
        if reader.skip(0x2E) || reader.skip(0x2C) {
            var scale = 0.1
            var any = false
            while let digit = reader.digit() { fraction += Double(digit) * scale; scale /= 10; any = true }
            guard any else { return nil }
        }
        var offset = 0
        if reader.skip(0x5A) || reader.skip(0x7A) {
            offset = 0
        } else if let sign = reader.peek(), sign == 0x2B || sign == 0x2D {
            reader.advance()
            guard let hours = reader.number(2) else { return nil }
            _ = reader.skip(0x3A)
            guard let minutes = reader.number(2), hours <= 23, minutes <= 59 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (sign == 0x2D ? -1 : 1)
        }
        guard let seconds = civilSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second),
              let time = plausible(Double(seconds - offset) + fraction) else { return nil }
        return (time, reader.consumed)
    }

    /// Seconds since 1970 of a UTC civil time, nil when the date or time does not exist.
    package static func civilSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute),
              (0...60).contains(second) else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthDays[month - 1] else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// Days since 1970-01-01 of a date in the proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day counted from 1970-01-01 (Howard Hinnant's civil_from_days).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

}

/// A cursor over ASCII bytes for the time parsers.
package struct DigitReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    package init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package var atEnd: Bool { index == bytes.count }
    package var consumed: Int { index }
    package func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }
    package mutating func advance() { index += 1 }

    package mutating func skip(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    package mutating func digit() -> Int? {
        guard let byte = peek(), byte >= 0x30, byte <= 0x39 else { return nil }
        index += 1
        return Int(byte - 0x30)
    }

    package mutating func number(_ digits: Int) -> Int? {
        var value = 0
        for _ in 0..<digits {
            guard let d = digit() else { return nil }
            value = value * 10 + d
        }
        return value
    }

    package mutating func take(_ count: Int) -> UnsafeBufferPointer<UInt8>? {
        guard bytes.count - index >= count else { return nil }
        defer { index += count }
        return UnsafeBufferPointer(rebasing: bytes[index..<(index + count)])
    }
}
