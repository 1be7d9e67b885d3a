import Foundation
import IDTokenConfiguration
import IDTokenKit
@testable import IDTokenServe
import Logging
import TestSupport
import Testing

/// One configuration, one verdict, whatever the door (DESIGN §14): every generated vector case that a configuration
/// file can express goes through `idtoken verify --config` and `idtoken audit --config` (the built executable, as a
/// user runs it) and through `idtoken serve`'s answer to a request carrying it, and each door's verdict is the
/// case's expected one.
@Suite struct DoorsAgreeTests {
    typealias Case = ProfileDoorsTests.Case

    /// The cases a bearer token can carry (the service reads no token with whitespace inside), grouped by the
    /// configuration file that says their profile and keys.
    static let groups: [(configuration: String, cases: [Case])] = {
        var order: [String] = []
        var byConfiguration: [String: [Case]] = [:]
        for test in ProfileDoorsTests.cases where !test.token.isEmpty && BearerToken.token(inAuthorization: "Bearer " + test.token) == test.token {
            let text = ProfileDoorsTests.configuration(test.options, keys: test.keys)
            if byConfiguration[text] == nil { order.append(text) }
            byConfiguration[text, default: []].append(test)
        }
        return order.map { ($0, byConfiguration[$0]!) }
    }()

    static func write(_ configuration: String) throws -> String {
        let path = NSTemporaryDirectory() + "doors-\(UUID().uuidString).json"
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func nonceArguments(_ test: Case) -> [String] {
        test.nonce.map { [$0.mode == .sha256Hex ? "--nonce" : "--nonce-exact", $0.value] } ?? []
    }

    @Test func theCasesCoverEveryProviderAndCode() {
        let cases = Self.groups.flatMap(\.cases)
        #expect(cases.count >= 300)
        for provider in Provider.allCases { #expect(cases.contains { $0.options.provider == provider }, "\(provider)") }
        let codes = Set(cases.compactMap(\.expected))
        #expect(codes.isSuperset(of: ["malformed", "algorithm_not_allowed", "unknown_key", "bad_signature", "expired", "not_yet_valid",
                                      "issued_in_future", "wrong_issuer", "wrong_audience", "invalid_claim", "nonce_mismatch"]),
                "\(codes.sorted())")
    }

    @Test("idtoken verify --config, idtoken audit --config and idtoken serve give every case its expected verdict")
    func everyDoorGivesTheExpectedVerdict() async throws {
        let idtoken = try #require(BuiltTool.path("idtoken"), "the idtoken executable is built with the tests")
        var disagreements: [String] = []
        for group in Self.groups {
            let path = try Self.write(group.configuration)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let configuration = try ConfigurationFile.load(path: path)

            // The audit: one run over every case of the configuration, each record with its own time and nonce.
            let records = group.cases.map { test in
                var record = "{\"token\":" + JSONText.quoted(test.token) + ",\"at\":\(test.at)"
                if let nonce = test.nonce { record += ",\"nonce\":" + JSONText.quoted(nonce.value) }
                return record + "}"
            }
            let audit = try await BuiltTool.run(idtoken, ["audit", "-", "--config", path, "--threads", "1"],
                                                input: Array((records.joined(separator: "\n") + "\n").utf8))
            #expect(audit.status == 0, "\(audit.stderr)")
            let verdicts = audit.stdout.split(separator: "\n").map { try? JSONTree.parse(String($0)) }
            #expect(verdicts.count == group.cases.count)

            for (index, test) in group.cases.enumerated() {
                let expected = test.expected ?? "valid"
                // idtoken verify --config
                let verify = try await BuiltTool.run(idtoken, ["verify", test.token, "--config", path, "--at", String(test.at), "--json"]
                                                     + Self.nonceArguments(test))
                let printed = try? JSONTree.parse(verify.stdout)
                let verifyCode = printed?["valid"]?.bool == true ? "valid" : printed?["error"]?["code"]?.string ?? "none: \(verify.stderr)"
                // idtoken audit --config
                let line = index < verdicts.count ? verdicts[index] : nil
                let auditCode = line?["valid"]?.bool == true ? "valid" : line?["error"]?.string ?? "none"
                // idtoken serve: the answer to a request carrying the token, the service judging at the case's time.
                let serveCode = try await Self.serveVerdict(test, configuration: configuration)
                if [verifyCode, auditCode, serveCode] != [expected, expected, expected] {
                    disagreements.append("\(test.id): expected \(expected); verify \(verifyCode), audit \(auditCode), serve \(serveCode)")
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements:\n\(disagreements.prefix(20).joined(separator: "\n"))")
    }

    /// The service's verdict: `valid` for a 200, else the code it answered with (`X-Auth-Error`). Decided twice, by two
    /// services: with the token as text (the gRPC door's way), and lent as bytes (the HTTP connection's); the verdict
    /// is the pair's when they agree.
    static func serveVerdict(_ test: Case, configuration: ConfigurationFile) async throws -> String {
        let settings = try ServeSettings.parse(nil, profileNames: configuration.profiles.map(\.name), baseDirectory: "/")
        func verdict(lending: Bool) async throws -> String {
            let service = try ServeService(configuration: configuration, settings: settings, fixedTime: test.at,
                                           logger: Logger(label: "doors", factory: { _ in SwiftLogNoOpLogHandler() }))
            var request = ServeRequest(target: "/verify", authorization: lending ? nil : "Bearer " + test.token, nonce: test.nonce?.value)
            request.lendsBearerToken = lending
            // The HTTP door's way when it batches signatures (the token left at its signature, then finished).
            let decision = Array(test.token.utf8).withUnsafeBytes { bytes in
                service.decide(request, batching: true, lentBearerToken: lending ? TokenBytes(bytes) : nil)
            }
            let response = await ServeService.response(of: decision)
            await service.shutdown()
            if response.status == 200 { return "valid" }
            return response.headers.first { $0.0 == "X-Auth-Error" }?.1 ?? "status \(response.status)"
        }
        // The connection lends a token of visible ASCII only (others are kept in the Authorization value, as text).
        let lendable = !test.token.isEmpty && test.token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        let text = try await verdict(lending: false), lent = try await verdict(lending: lendable)
        return text == lent ? text : "\(text) as text, \(lent) lent"
    }

    @Test("idtoken verify --config refuses options that the file holds, and a profile it does not name (exit 2)")
    func verifyConfigUsage() async throws {
        let idtoken = try #require(BuiltTool.path("idtoken"), "the idtoken executable is built with the tests")
        let group = try #require(Self.groups.first)
        let path = try Self.write(group.configuration)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let token = group.cases[0].token
        let refusals: [([String], String)] = [
            (["--provider", "firebase"], "--config holds the profiles' options"),
            (["--keys", "/k.json"], "do not give --keys as well"),
            (["--profile", "nope"], "--profile nope: the configuration has no such profile (p)"),
        ]
        for (extra, message) in refusals {
            let run = try await BuiltTool.run(idtoken, ["verify", token, "--config", path, "--json"] + extra)
            #expect(run.status == 2, "\(extra): \(run.stderr)")
            #expect(run.stderr.contains(message), "\(extra): \(run.stderr)")
            #expect((try? JSONTree.parse(run.stdout))?["error"]?["code"]?.string == "usage", "\(extra): \(run.stdout)")
        }
        let withoutConfig = try await BuiltTool.run(idtoken, ["verify", token, "--provider", "firebase", "--project-id", "x", "--profile", "p"])
        #expect(withoutConfig.status == 2 && withoutConfig.stderr.contains("--profile names a profile of --config"), "\(withoutConfig.stderr)")
        // The profile named exists: the token is judged by it, and the JSON names it.
        let named = try await BuiltTool.run(idtoken, ["verify", token, "--config", path, "--profile", "p", "--json", "--at", String(group.cases[0].at)]
                                            + Self.nonceArguments(group.cases[0]))
        #expect((try? JSONTree.parse(named.stdout))?["profile"]?.string == "p", "\(named.stdout)")
    }
}
