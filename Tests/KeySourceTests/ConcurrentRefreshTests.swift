import Foundation
import IDTokenKit
import NIOConcurrencyHelpers
import Testing

/// Verification while the key set is being replaced: the case ThreadSanitizer runs (scripts/sanitize) are meant
/// to watch. Threads and tasks verify through one verifier and one HTTPKeySource while another task makes the
/// source fetch rotated key sets, over and over; every verdict must be one that some published set explains.
@Suite struct ConcurrentRefreshTests {
    @Test func verificationDuringRepeatedRotation() async throws {
        let jwksA = HTTPKeySourceTests.jwksA   // test-rsa-1, test-rsa-2, test-ec-1
        let jwksB = HTTPKeySourceTests.jwksB   // test-rsa-2, test-rsa-3
        try await HTTPKeySourceTests.withServer(.json(jwksA)) { server in
            let clock = ManualClock()
            let source = try HTTPKeySourceTests.source(server, clock: clock)
            let verifier = try IDTokenVerifier(profile: .oidc(issuers: ["https://issuer.test.invalid"], audiences: ["test-audience"]),
                                               keys: source)
            let at = Date(timeIntervalSince1970: 1_700_000_100)
            let always = try #require(Fixtures.testTokens["test-rsa-2"])    // in both sets
            let onlyA = try #require(Fixtures.testTokens["test-rsa-1"])
            let onlyB = try #require(Fixtures.testTokens["test-rsa-3"])
            _ = try await source.keys(refreshingFor: nil)

            // The rotation: each refresh fetches the other set.
            let rotations = 60
            let rotator = Task {
                for n in 0..<rotations {
                    server.reply(.json(n % 2 == 0 ? jwksB : jwksA))
                    _ = try await source.refresh()
                    clock.advance(by: 31)   // past the unknown-kid cooldown, so that lookups may refetch too
                    await Task.yield()
                }
            }

            // Synchronous verifications on plain threads, against whatever snapshot is current.
            let threadsDone = DispatchGroup()
            let problems = ProblemLog()
            for thread in 0..<4 {
                DispatchQueue.global().async(group: threadsDone) {
                    for k in 0..<400 {
                        guard let keys = source.currentKeys() else { problems.add("no keys"); continue }
                        let token = [always, onlyA, onlyB][(thread + k) % 3]
                        do throws(TokenError) {
                            _ = try verifier.verify(token, keys: keys, now: at)
                            if token != always && keys.key(kid: token == onlyA ? "test-rsa-1" : "test-rsa-3") == nil {
                                problems.add("accepted with a set that lacks its key")
                            }
                        } catch where error.code == .unknownKey && token != always {
                        } catch {
                            problems.add("thread \(thread): \(error.code.rawValue) for \(token == always ? "test-rsa-2" : "a rotating kid")")
                        }
                    }
                }
            }

            // Asynchronous verifications, which may ask the source to refresh for an unknown kid.
            let asyncProblems = await withTaskGroup(of: String?.self) { group in
                for k in 0..<600 {
                    group.addTask {
                        let token = [always, onlyA, onlyB][k % 3]
                        do throws(TokenError) {
                            _ = try await verifier.verify(token, now: at)
                            return nil
                        } catch where error.code == .unknownKey && token != always {
                            return nil
                        } catch {
                            return "task \(k): \(error.code.rawValue)"
                        }
                    }
                }
                return await group.compactMap { $0 }.reduce(into: [String]()) { $0.append($1) }
            }
            try await rotator.value
            await withCheckedContinuation { continuation in threadsDone.notify(queue: .global()) { continuation.resume() } }

            #expect(asyncProblems.isEmpty, "\(asyncProblems.prefix(5))")
            #expect(problems.all.isEmpty, "\(problems.all.prefix(5))")
            #expect(server.requestCount >= rotations + 1)
            await source.shutdown()
        }
    }
}

/// Problems reported from several threads.
final class ProblemLog: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])
    func add(_ line: String) { lines.withLockedValue { $0.append(line) } }
    var all: [String] { lines.withLockedValue { $0 } }
}
