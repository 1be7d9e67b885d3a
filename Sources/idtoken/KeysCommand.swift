import ArgumentParser
import Foundation
import IDTokenKit

/// `idtoken keys`: fetch a provider's key set, show what a key file, archive or URL holds, and archive
/// snapshots so that old tokens stay verifiable after a rotation.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Fetch, inspect and archive provider key sets.",
        subcommands: [Fetch.self, Show.self, Archive.self]
    )

    static let usageFailure = ExitStatus.usage.exitCode
    static let keysUnavailable = ExitStatus.unavailable.exitCode

    struct Fetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a provider's key set.",
            discussion: """
            Without --out or --archive the body is written to standard output as served, and a summary to \
            standard error. Providers: firebase (JWKS), firebase-x509 (kid → certificate map), firebase-session, \
            apple, facebook; oidc needs --url.
            """
        )

        @Option(help: "firebase, firebase-x509, firebase-session, apple, facebook or oidc.") var provider: String
        @Option(help: "The key set URL (overrides the provider's default; required for oidc).") var url: String?
        @Option(help: "Write the body, as served, to this file.") var out: String?
        @Option(help: "Also store the body as a snapshot in this archive directory.") var archive: String?
        @OptionGroup var limits: FetchLimitOptions
        @Flag(help: "Print the summary as JSON.") var json = false

        func run() async throws {
            let target = try KeysCommand.url(provider: provider, url: url)
            let fetched = try await KeysCommand.fetch(target, limits: limits)
            let toStdout = out == nil && archive == nil
            if let out {
                do { try Data(fetched.body).write(to: URL(fileURLWithPath: out), options: .atomic) } catch {
                    KeysCommand.fail("cannot write \(out): \(error.localizedDescription)")
                    throw KeysCommand.usageFailure
                }
            }
            var archived: String?
            if let archive {
                do { archived = try KeyArchive.add(fetched.body, to: archive, at: fetched.status.fetchedAt ?? Date().timeIntervalSince1970) } catch {
                    KeysCommand.fail(error.message)
                    throw KeysCommand.usageFailure
                }
            }
            if toStdout { FileHandle.standardOutput.write(Data(fetched.body)) }
            let summary = KeySetReport(source: target, kind: "url", keys: fetched.keys, status: fetched.status, archivedAs: archived)
            let text = json ? summary.json() : summary.text()
            if toStdout {
                FileHandle.standardError.write(Data((text + "\n").utf8))
            } else {
                print(text)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the keys in a key file, an archive directory or at a URL.",
            discussion: """
            For each key: kid, algorithm, key type and size, SHA-256 thumbprint of the public key, and for an \
            archive the first and last time a snapshot listed it. Refused keys are listed with the reason.
            """
        )

        @Argument(help: "A JWKS or certificate-map file, an archive directory, or a URL.") var source: String
        @OptionGroup var limits: FetchLimitOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let report: KeySetReport
            do {
                switch KeySourceResolver.kind(of: source) {
                case .url:
                    let fetched = try await KeysCommand.fetch(source, limits: limits)
                    report = KeySetReport(source: source, kind: "url", keys: fetched.keys, status: fetched.status)
                case .directory:
                    report = KeySetReport(source: source, archive: try KeyArchive.load(directory: source))
                case .file:
                    let contents = try KeySetFile.read(file: source)
                    report = KeySetReport(source: source, kind: "file", keys: contents.keys, fetchedAt: contents.fetchedAt)
                }
            } catch let error as KeyFetchError {
                KeysCommand.fail(error.message)
                throw error.kind == .file || error.kind == .malformed ? KeysCommand.usageFailure : KeysCommand.keysUnavailable
            }
            print(json ? report.json() : report.text())
        }
    }

    struct Archive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage a key archive: a directory of key-set snapshots for one issuer.",
            subcommands: [Add.self]
        )

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Store a key file in an archive directory as a timestamped snapshot.",
                discussion: """
                The snapshot's time is --at, else the fetch time a key cache file records, else now. The \
                directory is created if needed.
                """
            )

            @Argument(help: "The archive directory (one per issuer).") var directory: String
            @Argument(help: "A JWKS, certificate-map or key cache file.") var file: String
            @Option(help: "When the key set was published: Unix seconds or an RFC 3339 time (without an offset, UTC).") var at: String?

            func run() async throws {
                var time: Double?
                if let at {
                    do { time = try UnixTime.argument(at, option: "--at") } catch {
                        KeysCommand.fail(error.reason)
                        throw KeysCommand.usageFailure
                    }
                }
                do {
                    for line in try add(time: time) { print(line) }
                } catch {
                    KeysCommand.fail(error.message)
                    throw error.kind == .noUsableKeys ? KeysCommand.keysUnavailable : KeysCommand.usageFailure
                }
            }

            private func add(time: Double?) throws(KeyFetchError) -> [String] {
                let before = (try? KeyArchive.load(directory: directory)).map { Set($0.entries.map(\.thumbprint)) } ?? []
                let path = try KeyArchive.add(file: file, to: directory, at: time, fallbackTime: Date().timeIntervalSince1970)
                let archive = try KeyArchive.load(directory: directory)
                let added = archive.entries.filter { !before.contains($0.thumbprint) }.map { $0.kid ?? "(no kid)" }
                var lines = ["stored \(path)",
                             "archive: \(archive.snapshots.count) snapshots, \(archive.entries.count) keys"
                                 + (added.isEmpty ? "" : ", new: \(added.joined(separator: ", "))")]
                if !archive.conflicts.isEmpty {
                    lines.append("warning: kids naming more than one key (refused): \(archive.conflicts.joined(separator: ", "))")
                }
                return lines
            }
        }
    }

    // MARK: Shared

    /// The provider's published key URL (DESIGN §4), unless `--url` names another.
    static func url(provider: String, url: String?) throws -> String {
        if let url { return url }
        let known: String? = switch provider.lowercased() {
        case Provider.firebase.rawValue: Profile.firebaseJWKSURL
        case "firebase-x509": Profile.firebaseCertificatesURL
        case Provider.firebaseSessionCookie.rawValue: Profile.firebaseSessionCookieCertificatesURL
        case Provider.apple.rawValue: Profile.appleJWKSURL
        case Provider.facebook.rawValue: Profile.facebookJWKSURL
        case Provider.firebaseAppCheck.rawValue: Profile.appCheckJWKSURL
        case Provider.appleNotification.rawValue: Profile.appleJWKSURL
        case Provider.google.rawValue: Profile.googleJWKSURL
        default: nil
        }
        if let known { return known }
        fail(provider.lowercased() == Provider.oidc.rawValue
             ? "--provider oidc needs --url (the issuer's jwks_uri)"
             : "unknown provider \(provider); use firebase, firebase-x509, firebase-session, apple, facebook, firebase-app-check, apple-notification, google or oidc")
        throw usageFailure
    }

    static func fetch(_ url: String, limits: FetchLimitOptions) async throws -> (keys: JWKSet, body: [UInt8], status: KeySourceStatus) {
        let source: HTTPKeySource
        do {
            source = try HTTPKeySource(url: url, cachePolicy: RemoteKeys.cachePolicy, limits: limits.limits,
                                       logger: RemoteKeys.logger(verbose: limits.verbose))
        } catch {
            fail(error.message)
            throw usageFailure
        }
        do {
            let keys = try await source.refresh()
            let body = source.currentBody() ?? []
            let status = source.status()
            await source.shutdown()
            return (keys, body, status)
        } catch {
            await source.shutdown()
            fail(error.message)
            throw keysUnavailable
        }
    }

    static func fail(_ message: String) {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    }
}

/// Download options shared by the subcommands that fetch.
struct FetchLimitOptions: ParsableArguments {
    @Option(help: "Seconds allowed for the whole download.") var timeout: Double = 15
    @Option(help: "Largest body accepted, in bytes.") var maxBytes: Int = 1 << 20
    @Flag(help: "Log what the key cache does to standard error.") var verbose = false

    func validate() throws {
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
        guard maxBytes > 0 else { throw ValidationError("--max-bytes must be positive") }
    }

    var limits: KeyFetchLimits {
        KeyFetchLimits(connectTimeout: .milliseconds(Int64(min(timeout, 5) * 1000)),
                       totalTimeout: .milliseconds(Int64(timeout * 1000)), maximumBodyBytes: maxBytes)
    }
}
