import ArgumentParser
import Foundation
import IDTokenConfiguration
import IDTokenKit

/// `idtoken verify TOKEN|- --provider … [policy options] [--keys SRC]… | --config FILE [--profile NAME]  [--at TIME] [--json]`
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify one token.",
        discussion: """
            Exit status: 0 valid, 1 invalid token, 2 bad usage or configuration, 3 keys or replay store unavailable.

            With --config, the configuration file's profiles (as `idtoken audit --config` and `idtoken serve` read \
            them) verify the token: the one its issuer names, or the one --profile names.

            Examples:
              idtoken verify "$TOKEN" --provider firebase --project-id my-app --keys securetoken.json
              idtoken verify - --provider apple --audience com.example.app --keys apple-keys.json --at 2021-06-25T10:05:00Z --json
              idtoken verify "$TOKEN" --config idtoken.json --json
            """
    )

    @Argument(help: "The token, or - to read it from standard input.")
    var token: String

    @OptionGroup var policy: ProfileOptions
    @OptionGroup var keyOptions: KeyOptions

    @Option(name: .long, help: "A configuration file of profiles (docs/audit.md): the token's issuer picks one. Takes the place of --provider, the policy options and --keys; --nonce and --nonce-exact still apply.")
    var config: String?

    @Option(name: .long, help: "With --config: the profile to verify with, by name, instead of routing by the token's issuer.")
    var profile: String?

    @Option(name: .long, help: "Time of verification: Unix seconds or an RFC 3339 time (a space may replace the T; without an offset, UTC) (default: now).")
    var at: String?

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() async throws {
        // Every input and option is checked before a key source is built, which may fetch over the network.
        var now = Date()
        let configuration: ConfigurationFile?
        let single: Profile?
        do throws(ConfigurationError) {
            if let at { now = Date(timeIntervalSince1970: try UnixTime.argument(at, option: "--at")) }
            if let config {
                guard policy.provider == nil, !policy.shapesProfile else {
                    throw ConfigurationError("--config holds the profiles' options; of the policy options only --nonce or --nonce-exact may be given with it")
                }
                guard keyOptions.keys.isEmpty else { throw ConfigurationError("--config names each profile's keys; do not give --keys as well") }
                let file = try ConfigurationFile.load(path: config)
                if at == nil, let fileAt = file.at { now = Date(timeIntervalSince1970: fileAt) }
                if let profile, !file.profiles.contains(where: { $0.name == profile }) {
                    throw ConfigurationError("--profile \(profile): the configuration has no such profile (\(file.profiles.map(\.name).joined(separator: ", ")))")
                }
                configuration = file
                single = nil
            } else {
                guard profile == nil else { throw ConfigurationError("--profile names a profile of --config; without --config give --provider") }
                configuration = nil
                single = try policy.profile()
            }
        } catch {
            fail(code: "usage", message: error.reason)
            throw ExitStatus.usage.exitCode
        }
        let text = try readToken()
        let verifier: MultiProfileVerifier
        do {
            if let configuration {
                verifier = try configuration.verifier(nonceMode: policy.nonceMode) { entry throws(ConfigurationError) in
                    do {
                        return try KeySourceResolver.resolve(entry.keys, cachePolicy: RemoteKeys.cachePolicy, logger: RemoteKeys.logger())
                    } catch {
                        throw ConfigurationError("profile \"\(entry.name)\" \"keys\": \(error)")
                    }
                }
            } else {
                let single = single!
                verifier = try MultiProfileVerifier([.init(verifier: try IDTokenVerifier(profile: single, keys: try keyOptions.keySource(for: single)))],
                                                    nonceMode: policy.nonceMode)
            }
        } catch let error as UsageError {
            fail(code: "usage", message: error.description)
            throw ExitStatus.usage.exitCode
        } catch let error as ConfigurationError {
            fail(code: "usage", message: error.reason)
            throw ExitStatus.usage.exitCode
        } catch let error as TokenError {
            report(error, profile: nil)
            throw ExitStatus.unavailable.exitCode
        }
        let outcome = await verifier.verify(text, now: now, nonce: policy.expectedNonce, profile: profile)
        for member in verifier.members {
            if let remote = member.verifier.keySource as? HTTPKeySource { await remote.shutdown() }
        }
        let named = config != nil ? outcome.profile : nil
        if let verified = outcome.verifiedToken {
            report(verified, profile: named)
        } else {
            let error = outcome.error ?? TokenError(.malformed, "no verdict")
            report(error, profile: named)
            if case .unavailable = error.httpRefusal { throw ExitStatus.unavailable.exitCode }
            throw ExitStatus.invalid.exitCode
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

    /// - Parameter profile: the configuration's profile that decided, named with --config.
    private func report(_ verified: VerifiedToken, profile: String?) {
        if json {
            print(JSONText.object([
                ("valid", "true"),
                ("provider", JSONText.quoted(verified.provider.rawValue)),
            ] + (profile.map { [("profile", JSONText.quoted($0))] } ?? []) + [
                ("alg", JSONText.quoted(verified.algorithm.rawValue)),
                ("kid", JSONText.optional(verified.kid)),
                ("claims", verified.claims.rawJSON),
            ] + (verified.appleNotification.map { [("event", Self.json($0))] } ?? [])))
        } else {
            var line = "valid: \(verified.provider.tokenName), \(verified.algorithm.rawValue)"
            if let profile { line += ", profile \(profile)" }
            if let kid = verified.kid { line += ", kid \(kid)" }
            print(line)
            print("  iss: \(verified.issuer)")
            print("  sub: \(verified.subject)")
            print("  aud: \(verified.claims.audience.joined(separator: ", "))")
            if verified.claims.expiresAt != nil { print("  exp: \(Int64(verified.expiresAt))") }
            if let event = verified.appleNotification {
                print("  event: \(event.type.rawValue), sub \(event.subject), at \(UnixTime.iso8601(Double(event.eventTime) / 1000))"
                      + (event.email.map { ", email \($0)" } ?? "") + (event.isPrivateEmail.map { ", private relay: \($0)" } ?? ""))
            }
        }
    }

    /// A notification's event as `verify --json` prints it.
    static func json(_ event: AppleNotification) -> String {
        JSONText.object([
            ("type", JSONText.quoted(event.type.rawValue)),
            ("sub", JSONText.quoted(event.subject)),
            ("eventTime", String(event.eventTime)),
        ] + (event.email.map { [("email", JSONText.quoted($0))] } ?? [])
          + (event.isPrivateEmail.map { [("isPrivateEmail", $0 ? "true" : "false")] } ?? []))
    }

    private func report(_ error: TokenError, profile: String?) {
        if json {
            print(JSONText.object([
                ("valid", "false"),
                ("provider", JSONText.optional(policy.provider)),
            ] + (profile.map { [("profile", JSONText.quoted($0))] } ?? []) + [
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
