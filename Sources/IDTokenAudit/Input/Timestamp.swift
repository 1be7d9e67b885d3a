import IDTokenKit

/// The one time form only logs carry: the Common Log Format's `10/Oct/2025:13:55:36 -0700`. Every other time an
/// audit reads (`--at`, a record's `at`, a configuration's `at`, a leading ISO 8601 time) is read by
/// ``UnixTime/parse(_:)``, the parser shared with `idtoken verify`.
enum Timestamp {
    /// The Common Log Format time `dd/Mon/yyyy:HH:MM:SS ±zzzz` at the start of `bytes`.
    static func commonLog(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
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
        guard let seconds = UnixTime.civilSeconds(year: year, month: monthIndex + 1, day: day, hour: hour, minute: minute,
                                                  second: second) else { return nil }
        return UnixTime.plausible(Double(seconds - offset))
    }
}
