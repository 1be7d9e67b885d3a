import ArgumentParser

/// The tool's exit statuses (DESIGN §7).
enum ExitStatus: Int32 {
    case valid = 0
    case invalid = 1
    case usage = 2
    case keysUnavailable = 3

    var exitCode: ExitCode { ExitCode(rawValue) }
}

/// Bad usage or configuration: printed as `error: …` and exits with status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
