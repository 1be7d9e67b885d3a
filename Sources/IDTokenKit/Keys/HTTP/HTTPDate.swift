/// HTTP-date (RFC 9110 §5.6.7) parsing, for the `Date` and `Expires` response headers.
///
/// Accepts the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms recipients
/// must still read: RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
/// Anything else (including `Expires: 0`) is not a date, which the cache treats as "already expired".
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The Unix time the header value names, or nil when it is not an HTTP-date.
    static func parse(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        var day: Int?, month: Int?, year: Int?, time: String?
        switch fields.count {
        case 6 where fields[5] == "GMT" && fields[0].hasSuffix(","):
            // IMF-fixdate: wkday, DD Mon YYYY HH:MM:SS GMT
            day = Int(fields[1]); month = monthIndex(fields[2]); year = Int(fields[3]); time = fields[4]
        case 4 where fields[3] == "GMT" && fields[0].hasSuffix(","):
            // RFC 850: weekday, DD-Mon-YY HH:MM:SS GMT
            let parts = fields[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let yy = Int(parts[2]) else { return nil }
            day = Int(parts[0]); month = monthIndex(parts[1]); time = fields[2]
            // Two-digit years more than 50 years in the future mean the previous century (RFC 9110 §5.6.7).
            year = parts[2].count == 2 ? (yy < 70 ? 2000 + yy : 1900 + yy) : yy
        case 5:
            // asctime: wkday Mon D HH:MM:SS YYYY
            month = monthIndex(fields[1]); day = Int(fields[2]); time = fields[3]; year = Int(fields[4])
        default:
            return nil
        }
        guard let day, let month, let year, let time, (1...9999).contains(year) else { return nil }
        let hms = time.split(separator: ":").map { Int($0) }
        guard hms.count == 3, let h = hms[0], let m = hms[1], let s = hms[2],
              let seconds = UnixTime.civilSeconds(year: year, month: month, day: day, hour: h, minute: m, second: s) else { return nil }
        return Double(seconds)
    }

    private static func monthIndex(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }
}
