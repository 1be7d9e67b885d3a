import ArgumentParser
import IDTokenKit

/// `idtoken nonce [--length N]`: a fresh raw nonce and the SHA-256 hex an app sends with it.
struct NonceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nonce",
        abstract: "Generate a random nonce and its SHA-256.",
        discussion: """
            The app sends the SHA-256 (hex) to Sign in with Apple or Facebook Limited Login and gives the raw
            value to the backend, which verifies with `--nonce RAW`.
            """
    )

    @Option(name: .long, help: "Characters of the base64url alphabet (16–512).")
    var length = 32

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard Nonce.lengthRange.contains(length) else { throw ValidationError("--length must be 16 to 512") }
    }

    func run() throws {
        let nonce: Nonce.Generated
        do { nonce = try Nonce.generate(length: length) } catch {
            print("error: \(error.reason)")
            throw ExitStatus.usage.exitCode
        }
        if json {
            print(JSONText.object([("raw", JSONText.quoted(nonce.raw)), ("sha256", JSONText.quoted(nonce.sha256Hex))]))
        } else {
            print("raw:    \(nonce.raw)")
            print("sha256: \(nonce.sha256Hex)")
        }
    }
}
