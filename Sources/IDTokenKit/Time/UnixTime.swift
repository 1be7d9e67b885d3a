/// Unix seconds as text: ISO 8601 UTC for people and file names, and back.
public enum UnixTime {
    /// `2025-03-01T12:00:00Z` (whole seconds, rounded down), or with `basic` the compact `20250301T120000Z` used in
    /// archive file names. A time outside years 1–9999, or not finite, is written as the number itself.
    public static func iso8601(_ time: Double, basic: Bool = false) -> String {
        guard time.isFinite, time >= -62_135_596_800, time < 253_402_300_800 else { return "\(time)" }
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

    /// `1616067537 (2021-03-18T11:38:57Z)`: a claim's time as the token carries it and as people read it, for
    /// rejection messages.
    static func describe(_ time: Double) -> String {
        let shown = time == time.rounded() && abs(time) < 1e15 ? "\(Int64(time))" : "\(time)"
        return "\(shown) (\(iso8601(time)))"
    }

    /// Reads Unix seconds (`1700000000`, `1700000000.5`) or ISO 8601 UTC in the extended
    /// (`2025-03-01T12:00:00Z`, optional fraction, `Z` or `±HH:MM`) or basic (`20250301T120000Z`) form.
    public static func parse(_ text: String) -> Double? {
        if let seconds = Double(text), seconds.isFinite, text.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" }) {
            return seconds
        }
        var s = Substring(text)
        var offset = 0
        if s.hasSuffix("Z") || s.hasSuffix("z") {
            s = s.dropLast()
        } else if s.count > 6, let sign = s.dropLast(5).last, sign == "+" || sign == "-",
                  s.suffix(5).dropFirst(2).first == ":" {
            let tz = s.suffix(5)
            guard let hh = Int(tz.prefix(2)), let mm = Int(tz.suffix(2)), hh < 24, mm < 60 else { return nil }
            offset = (sign == "+" ? 1 : -1) * (hh * 3600 + mm * 60)
            s = s.dropLast(6)
        } else {
            return nil
        }
        let parts = s.split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let date = parts[0].filter { $0 != "-" }
        var clock = Substring(parts[1])
        var fraction = 0.0
        if let dot = clock.firstIndex(where: { $0 == "." || $0 == "," }) {
            guard let f = Double("0." + clock[clock.index(after: dot)...]) else { return nil }
            fraction = f
            clock = clock[..<dot]
        }
        let hms = clock.filter { $0 != ":" }
        guard date.count == 8, hms.count == 6, date.allSatisfy(\.isASCII), hms.allSatisfy(\.isASCII),
              let y = Int(date.prefix(4)), let mo = Int(date.dropFirst(4).prefix(2)), let d = Int(date.suffix(2)),
              let h = Int(hms.prefix(2)), let mi = Int(hms.dropFirst(2).prefix(2)), let sec = Int(hms.suffix(2)),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, sec <= 60 else { return nil }
        let days = daysFromCivil(year: y, month: mo, day: d)
        return Double(days * 86_400 + h * 3600 + mi * 60 + sec - offset) + fraction
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
