import ArgumentParser
import Foundation
import IDTokenKit

/// `idtoken verify TOKEN|- --provider … [policy options] [--keys SRC]… [--at TIME] [--json]`
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify one token.",
        discussion: """
            Exit status: 0 valid, 1 invalid token, 2 bad usage or configuration, 3 keys unavailable.

            Examples:
              idtoken verify "$TOKEN" --provider firebase --project-id my-app --keys securetoken.json
              idtoken verify - --provider apple --audience com.example.app --keys apple-keys.json --at 2021-06-25T10:05:00Z --json
            """
    )

    @Argument(help: "The token, or - to read it from standard input.")
    var token: String

    @OptionGroup var policy: ProfileOptions
    @OptionGroup var keyOptions: KeyOptions

    @Option(name: .long, help: "Time of verification: Unix seconds or an RFC 3339 time (a space may replace the T; without an offset, UTC) (default: now).")
    var at: String?

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() async throws {
        // Every input and option is checked before a key source is built, which may fetch over the network.
        let now: Date
        let profile: Profile
        do throws(ConfigurationError) {
            if let at { now = Date(timeIntervalSince1970: try UnixTime.argument(at, option: "--at")) } else { now = Date() }
            profile = try policy.profile()
        } catch {
            fail(code: "usage", message: error.reason)
            throw ExitStatus.usage.exitCode
        }
        let text = try readToken()
        let verifier: IDTokenVerifier
        do {
            verifier = try IDTokenVerifier(profile: profile, keys: try keyOptions.keySource(for: profile))
        } catch let error as UsageError {
            fail(code: "usage", message: error.description)
            throw ExitStatus.usage.exitCode
        } catch let error as TokenError {
            report(error)
            throw ExitStatus.keysUnavailable.exitCode
        }
        do {
            let verified = try await verifier.verify(text, now: now, nonce: policy.expectedNonce)
            report(verified)
        } catch {
            report(error)
            throw (error.code == .keysUnavailable ? ExitStatus.keysUnavailable : ExitStatus.invalid).exitCode
        }
    }

    private func readToken() throws -> String {
        var text = token
        if token == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        }
        text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else {
            fail(code: "usage", message: "no token given")
            throw ExitStatus.usage.exitCode
        }
        return text
    }

    private func report(_ verified: VerifiedToken) {
        if json {
            print(JSONText.object([
                ("valid", "true"),
                ("provider", JSONText.quoted(verified.provider.rawValue)),
                ("alg", JSONText.quoted(verified.algorithm.rawValue)),
                ("kid", JSONText.optional(verified.kid)),
                ("claims", verified.claims.rawJSON),
            ]))
        } else {
            var line = "valid: \(verified.provider.tokenName), \(verified.algorithm.rawValue)"
            if let kid = verified.kid { line += ", kid \(kid)" }
            print(line)
            print("  iss: \(verified.issuer)")
            print("  sub: \(verified.subject)")
            print("  aud: \(verified.claims.audience.joined(separator: ", "))")
            print("  exp: \(Int64(verified.expiresAt))")
        }
    }

    private func report(_ error: TokenError) {
        if json {
            print(JSONText.object([
                ("valid", "false"),
                ("provider", JSONText.optional(policy.provider)),
                ("error", JSONText.object([
                    ("code", JSONText.quoted(error.code.rawValue)),
                    ("message", JSONText.quoted(error.message)),
                    ("claim", JSONText.optional(error.claim)),
                ])),
            ]))
        } else {
            print("invalid: \(error.code.rawValue)" + (error.claim.map { " (\($0))" } ?? ""))
            print("  \(error.message)")
        }
    }

    /// Usage and configuration errors: on standard error, and as JSON on standard output with --json.
    private func fail(code: String, message: String) {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        if json {
            print(JSONText.object([
                ("valid", "false"),
                ("error", JSONText.object([("code", JSONText.quoted(code)), ("message", JSONText.quoted(message)), ("claim", "null")])),
            ]))
        }
    }
}
