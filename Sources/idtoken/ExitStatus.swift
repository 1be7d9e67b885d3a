import ArgumentParser

/// The tool's exit statuses (DESIGN §7).
enum ExitStatus: Int32 {
    case valid = 0
    case invalid = 1
    case usage = 2
    /// The keys or the replay store could not be had (`keys_unavailable`, `replay_store_unavailable`): the token
    /// was not judged.
    case unavailable = 3

    var exitCode: ExitCode { ExitCode(rawValue) }
}

/// Bad usage or configuration: printed as `error: …` and exits with status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
