import IDTokenKit

/// Reads the times an audit record may carry: Unix seconds, ISO 8601, or the Common Log Format's
/// `10/Oct/2025:13:55:36 -0700`. All results are Unix seconds (UTC). No calendar, locale or clock is used.
public enum Timestamp {
    /// Parses Unix seconds (`1767225600`, `1767225600.25`) or ISO 8601 (`2026-01-01T00:00:00Z`,
    /// `2026-01-01T01:00:00.5+01:00`, `2026-01-01 00:00:00`). A time without an offset is taken as UTC.
    public static func parse(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        if let seconds = unixSeconds(bytes[...]) { return seconds }
        return iso8601(bytes[...])?.seconds
    }

    /// Unix seconds: digits with an optional fraction.
    static func unixSeconds(_ bytes: ArraySlice<UInt8>) -> Double? {
        guard !bytes.isEmpty, bytes.count <= 24 else { return nil }
        var sawDigit = false, sawDot = false
        for byte in bytes {
            if byte >= 0x30 && byte <= 0x39 { sawDigit = true } else if byte == 0x2E && !sawDot { sawDot = true } else { return nil }
        }
        guard sawDigit, let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// ISO 8601 date-time at the start of `bytes`; returns the time and how many bytes it used.
    static func iso8601(_ bytes: ArraySlice<UInt8>, requireWhole: Bool = true) -> (seconds: Double, length: Int)? {
        var reader = DigitReader(bytes)
        guard let year = reader.number(4), reader.skip(0x2D), let month = reader.number(2), reader.skip(0x2D),
              let day = reader.number(2) else { return nil }
        guard reader.skip(0x54) || reader.skip(0x74) || reader.skip(0x20) else { return nil }
        guard let hour = reader.number(2), reader.skip(0x3A), let minute = reader.number(2), reader.skip(0x3A),
              let second = reader.number(2) else { return nil }
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
        if requireWhole && !reader.atEnd { return nil }
        guard let seconds = civil(year: year, month: month, day: day, hour: hour, minute: minute, second: second) else { return nil }
        return (Double(seconds - offset) + fraction, reader.consumed)
    }

    /// The Common Log Format time `dd/Mon/yyyy:HH:MM:SS ±zzzz` at the start of `bytes`.
    static func commonLog(_ bytes: ArraySlice<UInt8>) -> Double? {
        var reader = DigitReader(bytes)
        guard let day = reader.number(2), reader.skip(0x2F) else { return nil }
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        guard let name = reader.take(3) else { return nil }
        let lower = String(decoding: name.map { $0 | 0x20 }, as: UTF8.self)
        guard let monthIndex = months.firstIndex(of: lower), reader.skip(0x2F), let year = reader.number(4), reader.skip(0x3A),
              let hour = reader.number(2), reader.skip(0x3A), let minute = reader.number(2), reader.skip(0x3A),
              let second = reader.number(2) else { return nil }
        var offset = 0
        if reader.skip(0x20), let sign = reader.peek(), sign == 0x2B || sign == 0x2D {
            reader.advance()
            guard let hours = reader.number(2), let minutes = reader.number(2) else { return nil }
            offset = (hours * 3600 + minutes * 60) * (sign == 0x2D ? -1 : 1)
        }
        guard let seconds = civil(year: year, month: monthIndex + 1, day: day, hour: hour, minute: minute, second: second) else { return nil }
        return Double(seconds - offset)
    }

    /// Seconds since 1970 for a UTC civil time (Howard Hinnant's days_from_civil), nil when out of range.
    static func civil(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int? {
        guard (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60 else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthDays[month - 1] else { return nil }
        let days = UnixTime.daysFromCivil(year: year, month: month, day: day)
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }
}

/// A cursor over ASCII bytes for the timestamp parsers.
struct DigitReader {
    let bytes: ArraySlice<UInt8>
    var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    var atEnd: Bool { index == bytes.endIndex }
    var consumed: Int { index - bytes.startIndex }
    func peek() -> UInt8? { index < bytes.endIndex ? bytes[index] : nil }
    mutating func advance() { index += 1 }

    mutating func skip(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    mutating func digit() -> Int? {
        guard let byte = peek(), byte >= 0x30, byte <= 0x39 else { return nil }
        index += 1
        return Int(byte - 0x30)
    }

    mutating func number(_ digits: Int) -> Int? {
        var value = 0
        for _ in 0..<digits {
            guard let d = digit() else { return nil }
            value = value * 10 + d
        }
        return value
    }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard bytes.endIndex - index >= count else { return nil }
        defer { index += count }
        return bytes[index..<(index + count)]
    }
}
