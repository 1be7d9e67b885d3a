import ArgumentParser
import Foundation

/// Runs an asynchronous command through its `async` requirement (on an existential, the synchronous `run()`
/// inherited from ParsableCommand would be chosen).
func runAsync<Command: AsyncParsableCommand>(_ command: inout Command) async throws {
    try await command.run()
}

// Entry point. ArgumentParser reports bad usage with EX_USAGE (64); DESIGN §7 promises 2 for bad usage or
// configuration, so usage errors are mapped here. Commands exit with their own statuses (0, 1, 2, 3).
// The Swift runtime reads the command line from /proc/self/cmdline on Linux: without /proc (a bare chroot) it has
// none, not even the program's name, and parsing nothing would print the help and exit 0 as if all were well.
guard !CommandLine.arguments.isEmpty else {
    FileHandle.standardError.write(Data("""
        error: idtoken cannot read its command line: the Swift runtime reads it from /proc/self/cmdline, and /proc \
        is not mounted here. Mount /proc (a chroot needs `mount -t proc proc ROOT/proc`), or run in a container, \
        which mounts it.\n
        """.utf8))
    exit(ExitStatus.usage.rawValue)
}
do {
    // `audit merge` is parsed on its own: `audit` takes a file name where a subcommand's name would be.
    let arguments = Array(CommandLine.arguments.dropFirst())
    var command: any ParsableCommand = arguments.starts(with: ["audit", "merge"])
        ? try AuditMergeCommand.parseAsRoot(Array(arguments.dropFirst(2)))
        : try IDToken.parseAsRoot(arguments)
    if var asyncCommand = command as? any AsyncParsableCommand {
        try await runAsync(&asyncCommand)
    } else {
        try command.run()
    }
} catch {
    let code = IDToken.exitCode(for: error)
    if code == .validationFailure {
        FileHandle.standardError.write(Data((IDToken.fullMessage(for: error) + "\n").utf8))
        exit(ExitStatus.usage.rawValue)
    }
    IDToken.exit(withError: error)
}
