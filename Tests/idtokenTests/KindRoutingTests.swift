import Foundation
import IDTokenConfiguration
import IDTokenKit
import TestSupport
import Testing

/// One configuration may hold profiles of two kinds of token from one issuer — Sign in with Apple's identity tokens
/// (`apple`) and its server notifications (`apple-notification`, which carry `events`) — and each token goes to the
/// profile of its kind, through `serve --config` and `audit --config` alike; profiles that nothing in a token tells
/// apart are refused when the configuration is loaded.
@Suite struct KindRoutingTests {
    typealias Case = ProfileDoorsTests.Case

    static let apple = ProfileDoorsTests.cases.filter { $0.options.provider == .apple }
    static let notifications = ProfileDoorsTests.cases.filter { $0.options.provider == .appleNotification }

    static func configuration(_ profiles: [String]) throws -> (path: String, file: ConfigurationFile) {
        let path = NSTemporaryDirectory() + "kinds-\(UUID().uuidString).json"
        try ("{\"profiles\": [" + profiles.joined(separator: ", ") + "]}").write(toFile: path, atomically: true, encoding: .utf8)
        return (path, try ConfigurationFile.load(path: path))
    }

    static func profile(_ test: Case, name: String) -> String {
        let audiences = test.options.audiences.map { "\"\($0)\"" }.joined(separator: ", ")
        return "{\"name\": \"\(name)\", \"provider\": \"\(test.options.provider.rawValue)\", \"audiences\": [\(audiences)], \"keys\": \"\(test.keys)\"}"
    }

    @Test func appleIdentityTokensAndNotificationsShareAnIssuerAndEachFindsItsProfile() async throws {
        let token = try #require(Self.apple.first { $0.id == "apple/valid" })
        let notification = try #require(Self.notifications.first { $0.id == "apple-notification/valid" })
        let (path, file) = try Self.configuration([Self.profile(notification, name: "notifications"), Self.profile(token, name: "sign-in")])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let verifier = try file.verifier()
        for (test, profile) in [(token, "sign-in"), (notification, "notifications")] {
            let outcome = verifier.evaluate(test.token, at: test.at)
            #expect(outcome.isValid && outcome.profile == profile, "\(test.id): \(outcome.profile ?? "none") \(outcome.error?.description ?? "")")
            // idtoken serve --config: the same profile answers.
            #expect(try await DoorsAgreeTests.serveVerdict(test, configuration: file) == "valid", "\(test.id)")
        }
        // idtoken audit --config: each record gets the profile of its kind. Both are valid only so: the other
        // profile refuses each (an identity token has no "events", a notification no "sub" of its own).
        let idtoken = try #require(BuiltTool.path("idtoken"))
        let records = [token, notification].map { "{\"token\":\"\($0.token)\",\"at\":\($0.at)}" }.joined(separator: "\n") + "\n"
        let audit = try await BuiltTool.run(idtoken, ["audit", "-", "--config", path], input: Array(records.utf8))
        #expect(audit.status == 0, "\(audit.stderr)")
        let lines = audit.stdout.split(separator: "\n").map { try? JSONTree.parse(String($0)) }
        #expect(lines.count == 2 && lines.allSatisfy { $0?["valid"]?.bool == true }, "\(audit.stdout)")
        for (test, other) in [(token, notification), (notification, token)] {
            let (alonePath, alone) = try Self.configuration([Self.profile(other, name: "other")])
            defer { try? FileManager.default.removeItem(atPath: alonePath) }
            #expect(!(try alone.verifier()).evaluate(test.token, at: test.at).isValid, "\(test.id) passes the other kind's profile")
        }
    }

    @Test func aCognitoPoolsIDAndAccessTokensEachFindTheirProfile() async throws {
        let id = try #require(ProfileDoorsTests.cases.first { $0.id == "cognito/valid" })
        let access = try #require(ProfileDoorsTests.cases.first { $0.id == "cognito-access/valid" })
        // The generated pools differ: the access-token profile takes the ID tokens' pool, keys and client here.
        func profile(_ provider: String, name: String) -> String {
            "{\"name\": \"\(name)\", \"provider\": \"\(provider)\", \"issuers\": [\"\(id.options.issuers[0])\"], \"audiences\": [\"\(id.options.audiences[0])\"], \"keys\": \"\(id.keys)\"}"
        }
        let (path, file) = try Self.configuration([profile("cognito-access", name: "api"), profile("cognito", name: "sign-in")])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let verifier = try file.verifier()
        #expect(verifier.evaluate(id.token, at: id.at).profile == "sign-in")
        #expect(verifier.evaluate(id.token, at: id.at).isValid)
        #expect(try await DoorsAgreeTests.serveVerdict(id, configuration: file) == "valid")
        // The access token of the same pool (its case's token is of another pool: the refusal says so, from the
        // access profile, which the token's kind chose).
        let other = verifier.evaluate(access.token, at: access.at)
        #expect(other.error?.code == .wrongIssuer && other.profile == nil, "\(other.error?.description ?? "")")
        let accessToken = try #require(ProfileDoorsTests.cases.first { $0.id == "cognito/access-token" })
        let routed = verifier.evaluate(accessToken.token, at: accessToken.at)
        #expect(routed.profile == "api" && routed.isValid, "\(routed.profile ?? "none"): \(routed.error?.description ?? "")")
        #expect(try await DoorsAgreeTests.serveVerdict(accessToken, configuration: file) == "valid")
        let idtoken = try #require(BuiltTool.path("idtoken"))
        let records = [id, accessToken].map { "{\"token\":\"\($0.token)\",\"at\":\($0.at)}" }.joined(separator: "\n") + "\n"
        let audit = try await BuiltTool.run(idtoken, ["audit", "-", "--config", path], input: Array(records.utf8))
        let lines = audit.stdout.split(separator: "\n").map { try? JSONTree.parse(String($0)) }
        #expect(audit.status == 0 && lines.count == 2 && lines.allSatisfy { $0?["valid"]?.bool == true }, "\(audit.stdout) \(audit.stderr)")
        // Alone, the ID-token profile refuses the access token, saying why.
        let (alonePath, alone) = try Self.configuration([profile("cognito", name: "sign-in")])
        defer { try? FileManager.default.removeItem(atPath: alonePath) }
        #expect(try alone.verifier().evaluate(accessToken.token, at: accessToken.at).error?.message.contains("send the ID token") == true)
    }

    @Test func anEntraProfileOfEveryTenantIsFoundByTheIssuersShape() throws {
        let anyTenant = try #require(ProfileDoorsTests.cases.first { $0.id == "entra/any-tenant" })
        let other = try #require(ProfileDoorsTests.cases.first { $0.id == "entra/any-tenant-iss-not-tid" })
        let firebase = try #require(ProfileDoorsTests.cases.first { $0.id == "firebase/valid" })
        let entra = "{\"name\": \"entra\", \"provider\": \"entra\", \"audiences\": [\"\(anyTenant.options.audiences[0])\"], \"anyTenant\": true, \"keys\": \"\(anyTenant.keys)\"}"
        let firebaseProfile = "{\"name\": \"app\", \"provider\": \"firebase\", \"projectId\": \"\(firebase.options.projectID!)\", \"keys\": \"\(firebase.keys)\"}"
        let (path, file) = try Self.configuration([firebaseProfile, entra])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let verifier = try file.verifier()
        let outcome = verifier.evaluate(anyTenant.token, at: anyTenant.at)
        #expect(outcome.isValid && outcome.profile == "entra", "\(outcome.error?.description ?? "")")
        // Routed to the Entra profile by its shape, then refused: its issuer is not its own tenant's.
        let refused = verifier.evaluate(other.token, at: other.at)
        #expect(refused.error?.code == .wrongIssuer && refused.profile == "entra", "\(refused.error?.description ?? "")")
        #expect(verifier.evaluate(firebase.token, at: firebase.at).profile == "app")
        // Two profiles of every tenant of the same issuer: nothing routes between them.
        let (twicePath, twice) = try Self.configuration([entra, entra.replacingOccurrences(of: "\"name\": \"entra\"", with: "\"name\": \"again\"")])
        defer { try? FileManager.default.removeItem(atPath: twicePath) }
        #expect { _ = try twice.verifier() } throws: { "\($0)".contains("both accept every issuer https://login.microsoftonline.com/{tenant}/v2.0") }
    }

    @Test func profilesThatNothingInATokenTellsApartAreRefused() throws {
        let token = try #require(Self.apple.first { $0.id == "apple/valid" })
        let oidc = "{\"name\": \"generic\", \"provider\": \"oidc\", \"issuers\": [\"https://appleid.apple.com\"], \"audiences\": [\"x\"], \"keys\": \"\(token.keys)\"}"
        for pair in [[Self.profile(token, name: "one"), Self.profile(token, name: "two")], [Self.profile(token, name: "one"), oidc]] {
            let (path, file) = try Self.configuration(pair)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect {
                _ = try file.verifier()
            } throws: { error in
                "\(error)".contains("both accept the issuer https://appleid.apple.com, and nothing in a token says which of them it is for")
            }
        }
    }
}
