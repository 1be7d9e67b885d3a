import ArgumentParser
import IDTokenKit

/// `--keys SRC` (repeatable): a JWKS file, a kid → PEM-certificate map file, a directory (key archive) of such
/// files, or a URL. Files and directories are merged into one static key set.
struct KeyOptions: ParsableArguments {
    @Option(name: .long, help: "JWKS or kid→PEM certificate map: a file, a directory of such files, or a URL. Repeatable; default: the provider's key URL.")
    var keys: [String] = []

    /// A key source for `profile`, resolved by ``KeySourceResolver``: one URL is fetched over HTTPS (without
    /// background refresh: the process is short-lived); files and archive directories merge into one static
    /// set, where a kid naming different keys in two places is refused and keys refused at load stay listed,
    /// so that tokens naming them are `unknown_key` with the reason.
    ///
    /// - Throws: ``UsageError`` for a missing or malformed file, an insecure URL, or a URL mixed with files
    ///   (exit 2); ``TokenError`` with `keys_unavailable` when the sources list no key at all (exit 3).
    func keySource(for profile: Profile) throws -> any KeySource {
        let sources = keys.isEmpty ? profile.keysURL.map { [$0] } ?? [] : keys
        guard !sources.isEmpty else {
            throw UsageError("no key source: give --keys FILE|DIR|URL or --jwks-url")
        }
        do {
            return try KeySourceResolver.resolve(sources, cachePolicy: RemoteKeys.cachePolicy, logger: RemoteKeys.logger())
        } catch where error.kind == .noUsableKeys {
            throw TokenError(.keysUnavailable, "no key at all in \(sources.joined(separator: ", "))")
        } catch {
            throw UsageError(error.message)
        }
    }
}
