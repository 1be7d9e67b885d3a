import ArgumentParser
import JOSE

/// `idtoken`: verify ID tokens from the command line (DESIGN §7).
struct IDToken: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idtoken",
        abstract: "Verify Firebase, Sign in with Apple, Facebook Limited Login and OpenID Connect ID tokens.",
        discussion: """
            Exit status: 0 valid, 1 invalid token, 2 bad usage or configuration, 3 keys or replay store unavailable.
            """,
        version: BuildInfo.versionLine,
        subcommands: subcommandTypes
    )
}
