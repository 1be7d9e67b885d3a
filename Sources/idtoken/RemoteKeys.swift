import IDTokenKit

/// Key sources fetched over HTTPS: the seam where `--keys URL` and the providers' default key URLs are served.
/// Until the HTTPS key source is wired in, a URL is a usage error that says what to do instead.
enum RemoteKeys {
    static func isURL(_ source: String) -> Bool {
        source.hasPrefix("https://") || source.hasPrefix("http://")
    }

    static func keySource(url: String, profile: Profile) throws -> any KeySource {
        throw UsageError("fetching keys from \(url) is not supported by this build yet; download the key set and pass it with --keys FILE")
    }
}
