import ArgumentParser
import Foundation
import IDTokenKit

/// `idtoken inspect TOKEN|- [--provider P [policy options]] [--at TIME] [--json]` (DESIGN §7, §16): what kind of
/// token this is and, given the profile the user meant, everything that profile would refuse and what to do.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Tell what kind of token this is and what is off with it, without verifying it.",
        discussion: """
            Reads the token without trusting it: no signature is checked and no key is fetched, so inspect never \
            says a token is valid (idtoken verify does). It names the kind — firebase, firebase-session, \
            firebase-custom, firebase-app-check, google, apple, apple-notification, facebook, \
            facebook-access-token, oidc or unknown — with its issuer, audience, key, algorithm and times in words, \
            and the options that would verify it. With --provider and the policy options, it lists everything that \
            profile would refuse, with the error codes idtoken verify gives.

            Exit status: 0 when the token was read and nothing is off with the options given, 1 when something is \
            (or the text is not a token), 2 for bad usage.

            Examples:
              idtoken inspect "$TOKEN"
              idtoken inspect - --provider firebase --project-id my-app --json < token.txt
            """)

    @Argument(help: "The token, or - to read it from standard input.")
    var token: String

    @OptionGroup var policy: ProfileOptions

    @Option(name: .long, help: "The time the token's times are described at: Unix seconds or an RFC 3339 time (default: now).")
    var at: String?

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        let inspection: TokenInspection
        do throws(ConfigurationError) {
            let now = try at.map { (text) throws(ConfigurationError) in try UnixTime.argument(text, option: "--at") } ?? Date().timeIntervalSince1970
            let profile = policy.provider != nil || policy.shapesProfile ? try policy.profile() : nil
            inspection = TokenInspection(try readToken(), now: now, profile: profile)
        } catch {
            FileHandle.standardError.write(Data("error: \(error.reason)\n".utf8))
            throw ExitStatus.usage.exitCode
        }
        print(json ? Self.json(inspection) : Self.text(inspection))
        if inspection.kind == .unknown || !inspection.findings.isEmpty { throw ExitStatus.invalid.exitCode }
    }

    private func readToken() throws(ConfigurationError) -> String {
        guard token == "-" else { return token }
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard data.count <= 1 << 20 else { throw ConfigurationError("standard input holds more than 1 MiB; give one token") }
        return String(decoding: data, as: UTF8.self)
    }

    /// The command that would verify the token, with a placeholder for it.
    static func verifyCommand(_ inspection: TokenInspection) -> String? {
        guard !inspection.suggestedOptions.isEmpty else { return nil }
        return "idtoken verify TOKEN " + inspection.suggestedOptions.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
    }

    static func text(_ inspection: TokenInspection) -> String {
        var lines = ["kind: \(inspection.kind.rawValue) (\(inspection.kind.name)); read without verifying it"]
        if let note = inspection.note { lines.append("  " + note) }
        let header = [("alg", inspection.algorithm), ("kid", inspection.keyID), ("typ", inspection.type)]
            .compactMap { name, value in value.map { "\(name) \($0)" } }
        if !header.isEmpty { lines.append("  header: " + header.joined(separator: ", ")) }
        if let issuer = inspection.issuer { lines.append("  iss: \(issuer)") }
        if !inspection.audience.isEmpty { lines.append("  aud: \(inspection.audience.joined(separator: ", "))") }
        if let subject = inspection.subject { lines.append("  sub: \(subject)") }
        for time in inspection.times {
            lines.append("  \(time.claim): \(UnixTime.iso8601(time.seconds)) (\(time.words))")
        }
        if let command = verifyCommand(inspection) { lines.append("to verify it: \(command)") }
        if !inspection.findings.isEmpty {
            lines.append("with the options given, it would be refused:")
            for finding in inspection.findings {
                lines.append("  - \(finding.code.rawValue)\(finding.claim.map { " (\($0))" } ?? ""): \(finding.message)")
            }
        }
        lines.append("not verified: inspect checks no signature; idtoken verify does")
        return lines.joined(separator: "\n")
    }

    static func json(_ inspection: TokenInspection) -> String {
        func list(_ values: [String]) -> String { "[" + values.map(JSONText.quoted).joined(separator: ",") + "]" }
        let times = inspection.times.map {
            JSONText.object([("claim", JSONText.quoted($0.claim)), ("time", JSONText.number($0.seconds)),
                             ("iso", JSONText.quoted(UnixTime.iso8601($0.seconds))), ("words", JSONText.quoted($0.words))])
        }
        let findings = inspection.findings.map {
            JSONText.object([("code", JSONText.quoted($0.code.rawValue)), ("claim", JSONText.optional($0.claim)),
                             ("message", JSONText.quoted($0.message))])
        }
        return JSONText.object([
            ("kind", JSONText.quoted(inspection.kind.rawValue)),
            ("name", JSONText.quoted(inspection.kind.name)),
            ("verified", "false"),
            ("note", JSONText.optional(inspection.note)),
            ("alg", JSONText.optional(inspection.algorithm)),
            ("kid", JSONText.optional(inspection.keyID)),
            ("typ", JSONText.optional(inspection.type)),
            ("iss", JSONText.optional(inspection.issuer)),
            ("aud", list(inspection.audience)),
            ("sub", JSONText.optional(inspection.subject)),
            ("times", "[" + times.joined(separator: ",") + "]"),
            ("options", list(inspection.suggestedOptions)),
            ("verify", JSONText.optional(verifyCommand(inspection))),
            ("findings", "[" + findings.joined(separator: ",") + "]"),
        ])
    }
}
