import Foundation
import IDTokenKit

/// The configuration file every door reads (`idtoken verify|audit|serve --config FILE`): several profiles, each
/// with its audiences or project and its keys, for one ``MultiProfileVerifier`` (tokens are routed to a profile by
/// their `iss`), and the members of the doors that need more (`at` for the audit, `serve` for the service).
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
/// Members of a profile map one to one onto ``Profile/Options`` (DESIGN §7), so a profile here is built, checked and
/// refused exactly as the same options on `idtoken verify` or `idtoken audit` are: `provider` (required: a
/// ``Provider`` name, `firebase` … `github-actions`, `cognito`, `entra`), `projectId`, `tenant` (Firebase's, or
/// Entra's tenant IDs, a string or a list), `anyTenant` and `entraV1` (Entra, `true` or `false`),
/// `allowedSignInProviders` (Firebase), `projectNumber` and `appId` (Firebase
/// App Check: the project number, the accepted app IDs), `hostedDomains` (Google Workspace domains), `audiences`
/// (Apple client IDs, Facebook App IDs — `appId` also works; an app's production and test App IDs may both be
/// given —, Google and OIDC client IDs; a string or a list), `issuers` (OIDC; extra issuers for Facebook),
/// `algorithms`, `jwksUrl`, `leeway` (seconds, 0–300), `nonceMode` (`sha256Hex` or `exact`) and `claims` (claims
/// the token must carry, each with a value or a list of accepted values, `*` matching any run of characters:
/// `--require-claim`); and `name` (default: the provider; must be unique) and `keys` (a key file, a directory of key files, or a URL; a
/// string or a list; relative paths are relative to the configuration file; default: the profile's keys URL). Top
/// level: `profiles` (required), `at` (the time of verification, and of audit records without one, read by
/// ``UnixTime/parse(_:)``; `--at` wins), `leeway` (the default for every profile) and `serve` (settings of
/// `idtoken serve`, kept as read and interpreted by the service alone). Unknown members are refused by name, so
/// that a misspelt option is not silently ignored.
package struct ConfigurationFile: Sendable {
    package struct Entry: Sendable {
        package let name: String
        package let profile: Profile
        /// The options the profile was built from.
        package let options: Profile.Options
        /// Key files, directories or URLs, paths already resolved against the configuration's directory.
        package let keys: [String]
    }

    package let profiles: [Entry]
    /// The time for records that carry none, when the file sets one.
    package let at: Double?
    /// The top-level `serve` object as read, for `idtoken serve`; the audit does not interpret it.
    package let serve: JSONTree?

    /// The verifier for these profiles, each with the key source `keys` gives it (``KeySourceResolver`` over the
    /// entry's `keys`, as `idtoken serve` resolves them, or key files read once, as an audit does).
    /// - Parameters:
    ///   - nonceMode: compare every nonce given as text this way (`--nonce`, `--nonce-exact`); nil: as each
    ///     profile says.
    ///   - cache: a verified-token cache for each profile (a service answering the same session tokens again).
    ///   - replayCache: accept each token once, whichever profile it is for.
    /// - Throws: ``ConfigurationError`` naming the profile whose keys cannot be had or that cannot be used.
    package func verifier(nonceMode: Nonce.Mode? = nil, cache: VerifiedTokenCache.Configuration? = nil,
                          replayCache: (any ReplayCache)? = nil,
                          keys: (Entry) throws(ConfigurationError) -> any KeySource) throws(ConfigurationError) -> MultiProfileVerifier {
        var members: [MultiProfileVerifier.Member] = []
        for entry in profiles {
            let source = try keys(entry)
            do {
                members.append(.init(name: entry.name, verifier: try IDTokenVerifier(profile: entry.profile, keys: source,
                                                                                    replayCache: replayCache, cache: cache)))
            } catch {
                throw ConfigurationError("profile \"\(entry.name)\": \(error.reason)")
            }
        }
        return try MultiProfileVerifier(members, nonceMode: nonceMode)
    }

    /// The verifier for these profiles with keys read once from files and directories (``KeyFiles``), for batch
    /// work: a profile whose keys are a URL needs them fetched first.
    /// - Throws: ``ConfigurationError`` when a key file cannot be read or a key source is a URL.
    package func verifier(nonceMode: Nonce.Mode? = nil) throws(ConfigurationError) -> MultiProfileVerifier {
        try verifier(nonceMode: nonceMode) { entry throws(ConfigurationError) in
            StaticKeySource(try keySet(of: entry))
        }
    }

    /// The keys of `entry` read from its files and directories.
    /// - Throws: ``ConfigurationError`` when a file cannot be read or a key source is a URL.
    package func keySet(of entry: Entry) throws(ConfigurationError) -> JWKSet {
        var keys = JWKSet.empty
        for source in entry.keys {
            if KeyFiles.isURL(source) {
                throw ConfigurationError("profile \"\(entry.name)\" takes its keys from \(source); fetch them first")
            }
            keys = keys.merging(try KeyFiles.load(source))
        }
        return keys
    }

    /// Reads the configuration at `path`.
    package static func load(path: String) throws(ConfigurationError) -> ConfigurationFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("cannot read the configuration file \(path)")
        }
        let base = (path as NSString).deletingLastPathComponent
        do throws(ConfigurationError) { return try parse(Array(data), baseDirectory: base.isEmpty ? "." : base) } catch {
            throw ConfigurationError("\(path): \(error.reason)")
        }
    }

    /// Reads a configuration from JSON text; relative key paths are resolved against `baseDirectory`.
    package static func parse(_ bytes: [UInt8], baseDirectory: String) throws(ConfigurationError) -> ConfigurationFile {
        let tree: JSONTree
        do { tree = try JSONTree.parse(bytes, maxDepth: 32) } catch { throw ConfigurationError("not valid JSON: \(error)") }
        guard let top = tree.objectMembers else { throw ConfigurationError("the configuration must be a JSON object") }
        try refuseUnknown(top.map(\.key), allowed: ["profiles", "at", "leeway", "serve"], in: "the configuration")
        var at: Double?
        if let value = tree["at"] {
            if let text = value.string {
                at = try UnixTime.argument(text, option: "\"at\"")
            } else {
                at = value.double.flatMap(UnixTime.plausible)
                guard at != nil else { throw ConfigurationError("\"at\" must be Unix seconds (1970 to the year 9999) or an RFC 3339 time") }
            }
        }
        var defaultLeeway: Int?
        if let value = tree["leeway"] {
            guard let seconds = value.int64, let whole = Int(exactly: seconds) else { throw ConfigurationError("\"leeway\" must be a whole number of seconds") }
            defaultLeeway = whole
        }
        var serve: JSONTree?
        if let value = tree["serve"] {
            guard value.objectMembers != nil else { throw ConfigurationError("\"serve\" must be a JSON object") }
            serve = value
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
        return ConfigurationFile(profiles: entries, at: at, serve: serve)
    }

    /// The members of a profile that are ``Profile/Options``, and the file's own (`name`, `keys`).
    static let profileMembers = ["provider", "name", "projectId", "projectNumber", "tenant", "allowedSignInProviders", "audiences",
                                 "appId", "hostedDomains", "issuers", "algorithms", "jwksUrl", "leeway", "nonceMode", "claims", "anyTenant",
                                 "entraV1", "keys"]

    /// The options a profile object holds, checked member by member; ``Profile/init(options:revocation:)`` checks
    /// how they fit together.
    static func options(_ item: JSONTree, index: Int, defaultLeeway: Int?) throws(ConfigurationError) -> (name: String, options: Profile.Options) {
        guard let members = item.objectMembers else { throw ConfigurationError("profile \(index + 1) must be a JSON object") }
        guard let providerName = item["provider"]?.string else {
            throw ConfigurationError("profile \(index + 1) has no \"provider\" (\(Profile.Options.providerNames))")
        }
        let provider: Provider
        do { provider = try Profile.Options.provider(named: providerName) } catch {
            throw ConfigurationError("profile \(index + 1): \(error.reason)")
        }
        if let value = item["name"], value.string?.isEmpty != false {
            throw ConfigurationError("profile \(index + 1): \"name\" must be a non-empty string")
        }
        let name = item["name"]?.string ?? providerName
        let what = "profile \"\(name)\""
        try refuseUnknown(members.map(\.key), allowed: profileMembers, in: what)

        func strings(_ key: String) throws(ConfigurationError) -> [String]? { try Self.strings(item, key, in: what) }
        func bool(_ key: String) throws(ConfigurationError) -> Bool {
            guard let value = item[key] else { return false }
            guard let flag = value.bool else { throw ConfigurationError("\(what): \"\(key)\" must be true or false") }
            return flag
        }
        func string(_ key: String) throws(ConfigurationError) -> String? {
            guard let value = item[key] else { return nil }
            guard let text = value.string else { throw ConfigurationError("\(what): \"\(key)\" must be a string") }
            return text
        }

        var options = Profile.Options(provider: provider)
        options.projectID = try string("projectId")
        options.projectNumber = try string("projectNumber")
        options.hostedDomains = try strings("hostedDomains") ?? []
        options.tenants = try strings("tenant") ?? []
        options.anyTenant = try bool("anyTenant")
        options.entraV1 = try bool("entraV1")
        options.allowedSignInProviders = try strings("allowedSignInProviders") ?? []
        options.audiences = try strings("audiences") ?? []
        if let appIDs = try strings("appId") {
            // Facebook's App IDs are its audiences; any other provider's "appId" is App Check's app IDs, which
            // Profile(options:) refuses for the providers that have none, with the message every door gives.
            if provider == .facebook {
                guard options.audiences.isEmpty else { throw ConfigurationError("\(what): give the App IDs as \"appId\" or \"audiences\", not both") }
                options.audiences = appIDs
            } else {
                options.appIDs = appIDs
            }
        }
        options.issuers = try strings("issuers") ?? []
        options.algorithms = try strings("algorithms") ?? []
        options.jwksURL = try string("jwksUrl")
        if let value = item["leeway"] {
            guard let seconds = value.int64, let whole = Int(exactly: seconds) else {
                throw ConfigurationError("\(what): \"leeway\" must be a whole number of seconds")
            }
            options.leeway = whole
        } else {
            options.leeway = defaultLeeway
        }
        if let value = item["claims"] {
            // {"repository": "acme/api", "ref": ["refs/heads/main", "refs/tags/v*"]}: each member a claim the token
            // must carry, with the value (or one of the values) it may hold.
            guard let claims = value.objectMembers else {
                throw ConfigurationError("\(what): \"claims\" must be an object of claim names and their accepted values")
            }
            for (claim, _) in claims {
                guard let values = try Self.strings(value, claim, in: "\(what) \"claims\"") else { continue }
                options.requiredClaims.append(.init(name: claim, values: values))
            }
        }
        if let mode = try string("nonceMode") {
            guard let value = NonceMode(rawValue: mode) else {
                throw ConfigurationError("\(what): \"nonceMode\" must be \"sha256Hex\" or \"exact\", not \"\(mode)\"")
            }
            options.nonceMode = value
        }
        return (name, options)
    }

    private static func profile(_ item: JSONTree, index: Int, defaultLeeway: Int?, baseDirectory: String) throws(ConfigurationError) -> Entry {
        let (name, options) = try options(item, index: index, defaultLeeway: defaultLeeway)
        let what = "profile \"\(name)\""
        let profile: Profile
        do { profile = try Profile(options: options) } catch { throw ConfigurationError("\(what): \(error.reason)") }
        var keys = try strings(item, "keys", in: what) ?? []
        if keys.isEmpty {
            guard let url = profile.keysURL else {
                throw ConfigurationError("\(what): give \"keys\" (a key file, directory or URL) or \"jwksUrl\"")
            }
            keys = [url]
        }
        keys = keys.map { KeyFiles.isURL($0) || $0.hasPrefix("/") ? $0 : (baseDirectory as NSString).appendingPathComponent($0) }
        return Entry(name: name, profile: profile, options: options, keys: keys)
    }

    /// A member that is a string or a list of strings, nil when absent.
    private static func strings(_ item: JSONTree, _ key: String, in what: String) throws(ConfigurationError) -> [String]? {
        guard let value = item[key] else { return nil }
        if let single = value.string { return [single] }
        guard let list = value.array, list.allSatisfy({ $0.string != nil }) else {
            throw ConfigurationError("\(what): \"\(key)\" must be a string or a list of strings")
        }
        return list.map { $0.string! }
    }

    private static func refuseUnknown(_ keys: [String], allowed: [String], in what: String) throws(ConfigurationError) {
        for key in keys where !allowed.contains(key) {
            throw ConfigurationError("\(what) has an unknown member \"\(key)\" (known: \(allowed.joined(separator: ", ")))")
        }
    }
}
