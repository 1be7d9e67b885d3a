import AsyncHTTPClient
import Logging

/// Turns the CLI's `--keys SRC` values (a URL, a key file, or an archive directory) into one key source.
///
/// ```swift
/// let source = try KeySourceResolver.resolve(["https://appleid.apple.com/auth/keys"])
/// let source = try KeySourceResolver.resolve(["old-keys/", "current.json"])   // merged, static
/// let source = try KeySourceResolver.resolve([], defaultURL: Profile.appleJWKSURL)
/// ```
package enum KeySourceResolver {
    /// What one `--keys` value names.
    package enum Kind: Sendable, Equatable {
        /// An `https://` (or `http://` on loopback) URL of a JWKS or certificate map.
        case url
        /// A JWKS, JWK or certificate-map file.
        case file
        /// A key archive directory.
        case directory
    }

    /// A value holding `://` is a URL; an existing directory is an archive; anything else is a key file.
    package static func kind(of spec: String) -> Kind {
        if spec.contains("://") { return .url }
        return KeyFileIO.isDirectory(spec) == true ? .directory : .file
    }

    /// One key source for the given values.
    ///
    /// - No values: an ``HTTPKeySource`` on `defaultURL` (the provider's published URL).
    /// - One URL: an ``HTTPKeySource`` on it (call ``HTTPKeySource/shutdown()`` when done).
    /// - Files and directories: one ``StaticKeySource`` with all their keys; a kid that names different keys
    ///   in two of them is refused. A set whose keys were all refused at load (too small, `use: enc`, …) is
    ///   kept: tokens naming them fail with `unknown_key` and the reason.
    ///
    /// The HTTP parameters are those of ``HTTPKeySource/init(url:httpClient:cachePolicy:limits:clock:cacheFilePath:logger:)``.
    /// - Throws: ``KeyFetchError`` for a bad URL, a missing or malformed file, sources listing no key at all
    ///   (`noUsableKeys`), more than one URL, or a URL mixed with files (fetched keys and fixed keys cannot share one cache).
    package static func resolve(_ specs: [String], defaultURL: String? = nil, httpClient: HTTPClient? = nil,
                               cachePolicy: KeyCachePolicy = KeyCachePolicy(), limits: KeyFetchLimits = KeyFetchLimits(),
                               clock: any KeyCacheClock = SystemKeyCacheClock(), cacheFilePath: String? = nil,
                               logger: Logger = Logger(label: "IDTokenKit.HTTPKeySource")) throws(KeyFetchError) -> any KeySource {
        let urls = specs.filter { kind(of: $0) == .url }
        let paths = specs.filter { kind(of: $0) != .url }
        if urls.count > 1 {
            throw KeyFetchError(.file, "give at most one key set URL (got \(urls.joined(separator: ", ")))")
        }
        if !urls.isEmpty && !paths.isEmpty {
            throw KeyFetchError(.file, "a key set URL cannot be combined with key files or directories; "
                                + "archive the fetched set (`idtoken keys archive add`) and pass the directory instead")
        }
        if let url = urls.first ?? (specs.isEmpty ? defaultURL : nil) {
            return try HTTPKeySource(url: url, httpClient: httpClient, cachePolicy: cachePolicy, limits: limits,
                                     clock: clock, cacheFilePath: cacheFilePath, logger: logger)
        }
        guard !paths.isEmpty else {
            throw KeyFetchError(.file, "no keys given and the provider has no default key set URL")
        }
        return StaticKeySource(try loadStatic(paths))
    }

    /// The merged usable keys of several files and archive directories.
    package static func loadStatic(_ paths: [String]) throws(KeyFetchError) -> JWKSet {
        var keys: [PublicKey] = []
        var rejected: [RejectedKey] = []
        for path in paths {
            let set = try KeySetFile.load(path)
            keys += set.keys
            rejected += set.rejected
        }
        // JWKSet refuses a kid that names two different keys, and keeps one copy of a key listed twice.
        let merged = JWKSet(keys: keys, rejected: rejected)
        guard !merged.isEmpty || !merged.rejected.isEmpty else {
            throw KeyFetchError(.noUsableKeys, "\(paths.joined(separator: ", ")) list no key at all")
        }
        return merged
    }
}
