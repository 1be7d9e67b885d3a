import Foundation
import IDTokenKit

/// A multi-provider audit read from a JSON file (`idtoken audit --config FILE`): several profiles, each with its
/// audiences or project and its keys. Tokens are routed to a profile by their `iss` (see ``ProfileJudge``).
///
/// ```json
/// {
///   "at": "2026-01-01T12:00:00Z",
///   "leeway": 60,
///   "profiles": [
///     {"provider": "firebase", "projectId": "my-project", "keys": "keys/firebase.json"},
///     {"provider": "apple", "audiences": ["com.example.app"], "keys": "keys/apple.json"},
///     {"provider": "facebook", "appId": "1234567890", "keys": "keys/facebook.json"},
///     {"name": "github-actions", "provider": "oidc", "issuers": ["https://token.actions.githubusercontent.com"],
///      "audiences": ["https://github.com/example"], "algorithms": ["RS256"], "keys": "keys/github.json"}
///   ]
/// }
/// ```
///
/// Members of a profile: `provider` (required: `firebase`, `firebase-session`, `apple`, `facebook`, `oidc`),
/// `name` (default: the provider; must be unique), `projectId` (Firebase), `tenant` and
/// `allowedSignInProviders` (Firebase), `audiences` (Apple client IDs, the Facebook App ID — `appId` also works —,
/// OIDC audiences; a string or a list), `issuers` (OIDC; extra issuers for Facebook), `algorithms` (OIDC),
/// `leeway` (seconds, 0–300), `keys` (a key file, a directory of key files, or a URL; a string or a list;
/// relative paths are relative to the configuration file; default: the provider's published keys URL) and
/// `jwksUrl` (OIDC). Top level: `profiles` (required), `at` (the time for records without one, Unix seconds or
/// ISO 8601; `--at` wins), `leeway` (the default for every profile). Unknown members are refused, so that a
/// misspelt option is not silently ignored.
public struct AuditConfiguration: Sendable {
    public struct Entry: Sendable {
        public let name: String
        public let profile: Profile
        /// Key files, directories or URLs, paths already resolved against the configuration's directory.
        public let keys: [String]
    }

    public let profiles: [Entry]
    /// The time for records that carry none, when the file sets one.
    public let at: Double?
    /// The top-level `serve` member as it was written, for `idtoken serve`, which parses and checks it; the
    /// audit ignores it.
    public var serve: JSONTree? = nil

    /// A judge for these profiles with keys read from files and directories (``KeyFiles``). A profile whose
    /// keys are a URL needs them fetched first: build its ``AuditProfile`` with the fetched set instead.
    /// - Throws: ``ConfigurationError`` when a key file cannot be read or a key source is a URL.
    public func judge(nonceMode: NonceMode? = nil) throws(ConfigurationError) -> ProfileJudge {
        var built: [AuditProfile] = []
        for entry in profiles {
            var keys = JWKSet.empty
            for source in entry.keys {
                if KeyFiles.isURL(source) {
                    throw ConfigurationError("profile \"\(entry.name)\" takes its keys from \(source); fetch them first")
                }
                keys = keys.merging(try KeyFiles.load(source))
            }
            built.append(try AuditProfile(name: entry.name, profile: entry.profile, keys: keys))
        }
        return try ProfileJudge(profiles: built, nonceMode: nonceMode)
    }

    /// Reads the configuration at `path`.
    public static func load(path: String) throws(ConfigurationError) -> AuditConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("cannot read the audit configuration \(path)")
        }
        let base = (path as NSString).deletingLastPathComponent
        do throws(ConfigurationError) { return try parse(Array(data), baseDirectory: base.isEmpty ? "." : base) } catch {
            throw ConfigurationError("\(path): \(error.reason)")
        }
    }

    /// Reads a configuration from JSON text; relative key paths are resolved against `baseDirectory`.
    public static func parse(_ bytes: [UInt8], baseDirectory: String) throws(ConfigurationError) -> AuditConfiguration {
        let tree: JSONTree
        do { tree = try JSONTree.parse(bytes, maxDepth: 8) } catch { throw ConfigurationError("not valid JSON: \(error)") }
        guard let top = tree.objectMembers else { throw ConfigurationError("the configuration must be a JSON object") }
        try refuseUnknown(top.map(\.key), allowed: ["profiles", "at", "leeway", "serve"], in: "the configuration")
        var at: Double?
        if let value = tree["at"] {
            at = value.double ?? value.string.flatMap(Timestamp.parse)
            guard at != nil else { throw ConfigurationError("\"at\" must be Unix seconds or an ISO 8601 time") }
        }
        var defaultLeeway: Int?
        if let value = tree["leeway"] {
            guard let seconds = value.int64 else { throw ConfigurationError("\"leeway\" must be a whole number of seconds") }
            defaultLeeway = Int(seconds)
        }
        guard let list = tree["profiles"]?.array, !list.isEmpty else {
            throw ConfigurationError("\"profiles\" must be a non-empty list of profiles")
        }
        var entries: [Entry] = []
        for (index, item) in list.enumerated() {
            let entry = try profile(item, index: index, defaultLeeway: defaultLeeway, baseDirectory: baseDirectory)
            if entries.contains(where: { $0.name == entry.name }) {
                throw ConfigurationError("two profiles are named \"\(entry.name)\"; give each a distinct \"name\"")
            }
            entries.append(entry)
        }
        return AuditConfiguration(profiles: entries, at: at, serve: tree["serve"])
    }

    private static func profile(_ item: JSONTree, index: Int, defaultLeeway: Int?, baseDirectory: String) throws(ConfigurationError) -> Entry {
        guard let members = item.objectMembers else { throw ConfigurationError("profile \(index + 1) must be a JSON object") }
        let allowed = ["provider", "name", "projectId", "tenant", "allowedSignInProviders", "audiences", "appId", "issuers",
                       "algorithms", "leeway", "keys", "jwksUrl"]
        guard let providerName = item["provider"]?.string else {
            throw ConfigurationError("profile \(index + 1) has no \"provider\" (firebase, firebase-session, apple, facebook or oidc)")
        }
        guard let provider = Provider(rawValue: providerName) else {
            throw ConfigurationError("profile \(index + 1): unknown provider \"\(providerName)\" (firebase, firebase-session, apple, facebook or oidc)")
        }
        let name = item["name"]?.string ?? providerName
        let what = "profile \"\(name)\""
        try refuseUnknown(members.map(\.key), allowed: allowed, in: what)

        func strings(_ key: String) throws(ConfigurationError) -> [String]? {
            guard let value = item[key] else { return nil }
            if let single = value.string { return [single] }
            guard let list = value.array, list.allSatisfy({ $0.string != nil }) else {
                throw ConfigurationError("\(what): \"\(key)\" must be a string or a list of strings")
            }
            return list.map { $0.string! }
        }
        func require(_ value: [String]?, _ message: String) throws(ConfigurationError) -> [String] {
            guard let value, !value.isEmpty else { throw ConfigurationError("\(what): \(message)") }
            return value
        }

        var profile: Profile
        switch provider {
        case .firebase, .firebaseSessionCookie:
            guard let project = item["projectId"]?.string, !project.isEmpty else {
                throw ConfigurationError("\(what): a Firebase profile needs \"projectId\"")
            }
            let tenant = item["tenant"]?.string
            let allowedProviders = try strings("allowedSignInProviders")
            profile = provider == .firebase
                ? .firebase(projectID: project, tenant: tenant, allowedSignInProviders: allowedProviders)
                : .firebaseSessionCookie(projectID: project, tenant: tenant, allowedSignInProviders: allowedProviders)
        case .apple:
            profile = .apple(clientIDs: try require(try strings("audiences"), "an Apple profile needs \"audiences\" (bundle IDs or Services IDs)"))
        case .facebook:
            var given = try strings("appId")
            if given == nil { given = try strings("audiences") }
            let appIDs = try require(given, "a Facebook profile needs \"appId\" (the Facebook App ID)")
            guard appIDs.count == 1 else { throw ConfigurationError("\(what): a Facebook profile takes one App ID") }
            profile = .facebook(appID: appIDs[0], extraIssuers: try strings("issuers") ?? [])
        case .oidc:
            let issuers = try require(try strings("issuers"), "an OIDC profile needs \"issuers\"")
            let audiences = try require(try strings("audiences"), "an OIDC profile needs \"audiences\"")
            var algorithms = Profile.oidcDefaultAlgorithms
            if let names = try strings("algorithms") {
                algorithms = []
                for algorithmName in names {
                    guard let algorithm = JWSAlgorithm(rawValue: algorithmName) else {
                        throw ConfigurationError("\(what): unknown algorithm \"\(algorithmName)\" (\(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    algorithms.insert(algorithm)
                }
            }
            profile = .oidc(issuers: issuers, audiences: audiences, algorithms: algorithms, jwksURL: item["jwksUrl"]?.string)
        }
        if let value = item["leeway"] {
            guard let seconds = value.int64 else { throw ConfigurationError("\(what): \"leeway\" must be a whole number of seconds") }
            profile = profile.withLeeway(Leeway(seconds: Int(seconds)))
        } else if let defaultLeeway {
            profile = profile.withLeeway(Leeway(seconds: defaultLeeway))
        }
        try profile.validate()
        var keys = try strings("keys") ?? []
        if keys.isEmpty {
            guard let url = profile.keysURL else {
                throw ConfigurationError("\(what): give \"keys\" (a key file, directory or URL) or \"jwksUrl\"")
            }
            keys = [url]
        }
        keys = keys.map { KeyFiles.isURL($0) || $0.hasPrefix("/") ? $0 : (baseDirectory as NSString).appendingPathComponent($0) }
        return Entry(name: name, profile: profile, keys: keys)
    }

    private static func refuseUnknown(_ keys: [String], allowed: [String], in what: String) throws(ConfigurationError) {
        for key in keys where !allowed.contains(key) {
            throw ConfigurationError("\(what) has an unknown member \"\(key)\" (known: \(allowed.joined(separator: ", ")))")
        }
    }
}
