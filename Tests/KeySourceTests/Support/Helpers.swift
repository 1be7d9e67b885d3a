import Foundation
import IDTokenKit

/// The fixtures folder beside these tests.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static func bytes(_ name: String) -> [UInt8] { Array(try! Data(contentsOf: directory.appendingPathComponent(name))) }

    /// `test-keys/tokens.json` as kid → token.
    static let testTokens: [String: String] = {
        let tree = try! JSONTree.parse(bytes("test-keys/tokens.json"))
        var tokens: [String: String] = [:]
        for entry in tree["tokens"]!.array! { tokens[entry["kid"]!.string!] = entry["token"]!.string! }
        return tokens
    }()

    /// A fresh empty directory under the system's temporary directory.
    static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "idtoken-keysource-tests-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Polls `condition` (real time) until it holds or `timeout` passes; returns whether it held. The default is
/// long because it only matters when the condition is slow to hold: a first fetch while every suite starts at
/// once on a 2-core machine has taken over 5 s.
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + timeout
    while clock.now < end {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

extension JWKSet {
    var sortedKids: [String] { kids.sorted() }
}
