import IDTokenKit

/// Reads key sets from files for a configuration file's profiles and the command line's `--keys`: a JWKS, a single JWK or a kid → PEM-certificate map in one file, or
/// a key archive directory (every key a provider has published, so that old logs verify after a rotation),
/// through IDTokenKit's `KeySourceResolver`.
package enum KeyFiles {
    /// Whether `reference` names a URL rather than a path.
    package static func isURL(_ reference: String) -> Bool {
        KeySourceResolver.kind(of: reference) == .url
    }

    /// The key set in the file or directory at `path`.
    /// - Throws: ``ConfigurationError`` naming the file when it cannot be read or lists no key.
    package static func load(_ path: String) throws(ConfigurationError) -> JWKSet {
        do { return try KeySourceResolver.loadStatic([path]) } catch {
            throw ConfigurationError(error.description)
        }
    }
}
