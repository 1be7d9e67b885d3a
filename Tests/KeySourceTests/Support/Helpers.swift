import Foundation
import IDTokenKit
import TestSupport

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

    /// A fresh empty directory, removed when the test process exits.
    static func temporaryDirectory() -> String { TestDirectory.make("keysource") }
}

/// Polls `condition` until it holds or it has had `timeout` of real time to hold; returns whether it held. The
/// default is long because it only matters when the condition is slow to hold: a first fetch while every suite
/// starts at once on a 2-core machine has taken over 5 s. A poll that wakes late counts as one short step, not
/// as the time it overslept: when other suites' synchronous work holds every cooperative thread, the tasks the
/// condition waits for are held up as long as this one, and a deadline counted in wall time would run out
/// before they had a turn (CI, 2026-11: the failed first fetch's warning was never polled again after 44 s).
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let step = Duration.milliseconds(5)
    var waited = Duration.zero
    while waited < timeout {
        if condition() { return true }
        let before = clock.now
        try? await Task.sleep(for: step)
        waited += min(clock.now - before, step * 4)
    }
    return condition()
}

extension JWKSet {
    var sortedKids: [String] { kids.sorted() }
}
