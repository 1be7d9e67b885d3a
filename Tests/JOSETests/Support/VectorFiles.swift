import Foundation
import JOSE

/// Reads the test vectors that ship with the repository (`Vectors/`), located relative to this source file so
/// that the tests need nothing outside a fresh clone.
enum VectorFiles {
    /// The repository's `Vectors/` directory.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // JOSETests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository
        .appendingPathComponent("Vectors")

    /// The raw bytes of `Vectors/<path>`.
    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(path)))
    }

    /// `Vectors/<path>` parsed by Jansson (any value at the top; deep enough for every vector file).
    static func json(_ path: String) throws -> JSONTree {
        try JSONTree.parse(try bytes(path), maxDepth: 256)
    }
}
