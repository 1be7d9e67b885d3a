import ArgumentParser
import Foundation

/// `--at TIME`: Unix seconds (`1616063940`, `1616063940.5`) or ISO 8601 (`2021-03-18T10:39:00Z`,
/// `2021-03-18T11:39:00+01:00`, with or without fractional seconds).
struct TimeArgument: ExpressibleByArgument {
    let date: Date

    init?(argument: String) {
        if let seconds = Double(argument), seconds.isFinite, argument.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" }) {
            date = Date(timeIntervalSince1970: seconds)
            return
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let parsed = formatter.date(from: argument) {
            date = parsed
            return
        }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let parsed = formatter.date(from: argument) else { return nil }
        date = parsed
    }

    static var defaultValueDescription: String { "now" }
}
