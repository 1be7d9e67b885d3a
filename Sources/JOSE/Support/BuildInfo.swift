internal import CJOSEShims

/// What `idtoken --version` tells: the release version, and the commit a packaged binary was built from
/// (`scripts/package` compiles it in; a build from source has none).
package enum BuildInfo {
    /// The version of this release of IDTokenKit and `idtoken`. `scripts/package` names its artifacts after it.
    package static let version = "0.1.0"

    /// The commit the binary was built from (40 hex digits), or nil for a build that did not say.
    package static let commit: String? = {
        let commit = String(cString: idtk_build_commit())
        return commit.isEmpty ? nil : commit
    }()

    /// `0.1.0 (commit 7a0fe7b…)`, or `0.1.0 (built from source)`.
    package static var versionLine: String {
        "\(version) (\(commit.map { "commit \($0)" } ?? "built from source"))"
    }
}
