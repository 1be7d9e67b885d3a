/// Formats Unix seconds as ISO 8601 UTC (`2021-03-18T11:38:57Z`) for messages, without a calendar or locale.
enum UTCTime {
    static func iso8601(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= -62_135_596_800, seconds <= 253_402_300_799 else { return "\(seconds)" }
        let whole = Int64(seconds.rounded(.down))
        var days = whole / 86_400
        var rest = whole % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var yearText = "\(year)"
        while yearText.count < 4 { yearText = "0" + yearText }
        return "\(yearText)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))Z"
    }

    /// `1616067537 (2021-03-18T11:38:57Z)`.
    static func describe(_ seconds: Double) -> String {
        let shown = seconds == seconds.rounded() && abs(seconds) < 1e15 ? "\(Int64(seconds))" : "\(seconds)"
        return "\(shown) (\(iso8601(seconds)))"
    }
}
