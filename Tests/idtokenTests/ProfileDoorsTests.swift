import ArgumentParser
import Foundation
import IDTokenAudit
import IDTokenConfiguration
import IDTokenKit
import Testing
@testable import idtoken

/// Same options ⇒ same profile ⇒ same verdict, through every door: `Profile(options:)` directly, the command
/// line's option group (shared by `verify` and `audit`), and an audit configuration file's profile.
@Suite struct ProfileDoorsTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Vectors").standardizedFileURL

    /// A vector case whose profile the three doors can all express (no revocation list, no replay cache).
    struct Case: CustomTestStringConvertible, Sendable {
        let id: String
        let token: String
        let keys: String
        let at: Double
        let nonce: (mode: NonceMode, value: String)?
        let options: Profile.Options
        let expected: String?
        var testDescription: String { id }
    }

    static let cases: [Case] = Provider.allCases.map(\.rawValue).flatMap { name -> [Case] in
        let data = try! Data(contentsOf: vectors.appendingPathComponent("generated/\(name).json"))
        let doc = try! JSONTree.parse(Array(data))
        return (doc["cases"]?.array ?? []).compactMap { c -> Case? in
            guard let profile = c["profile"], profile["revoked_before"] == nil, c["replay"] == nil || c["replay"] == .null,
                  let keys = c["keys"]?.string, let token = c["token"]?.string, let at = c["at"]?.double,
                  let provider = profile["provider"]?.string.flatMap(Provider.init(rawValue:)) else { return nil }
            var options = Profile.Options(provider: provider)
            options.projectID = profile["project_id"]?.string
            options.tenant = profile["tenant"]?.string
            options.tenants += profile["tenants"]?.array?.compactMap(\.string) ?? []
            options.anyTenant = profile["any_tenant"]?.bool ?? false
            options.entraV1 = profile["entra_v1"]?.bool ?? false
            options.allowedSignInProviders = profile["allowed_sign_in_providers"]?.array?.compactMap(\.string) ?? []
            options.audiences = (profile["client_ids"] ?? profile["audiences"])?.array?.compactMap(\.string)
                ?? profile["app_id"]?.string.map { [$0] } ?? []
            options.issuers = (profile["issuers"] ?? profile["extra_issuers"])?.array?.compactMap(\.string) ?? []
            options.algorithms = profile["algorithms"]?.array?.compactMap(\.string) ?? []
            options.leeway = profile["leeway"]?.int64.map { Int($0) }
            options.projectNumber = profile["project_number"]?.string
            options.appIDs = profile["app_ids"]?.array?.compactMap(\.string) ?? []
            options.hostedDomains = profile["hosted_domains"]?.array?.compactMap(\.string) ?? []
            options.requiredClaims = (profile["required_claims"]?.objectMembers ?? []).map {
                .init(name: $0.key, values: $0.value.array?.compactMap(\.string) ?? [])
            }
            var nonce: (NonceMode, String)?
            if let n = c["nonce"], let mode = n["mode"]?.string, let value = n["value"]?.string {
                nonce = (mode == "sha256hex" ? .sha256Hex : .exact, value)
                options.nonceMode = nonce?.0
            }
            // Some cases give the verifier a profile no door accepts (an empty project ID): not this test's subject.
            guard (try? Profile(options: options)) != nil else { return nil }
            return Case(id: c["id"]?.string ?? "?", token: token, keys: vectors.appendingPathComponent(keys).path, at: at,
                        nonce: nonce, options: options, expected: c["expect"]?["error"]?.string)
        }
    }

    /// The command line that says what `options` say.
    static func arguments(_ options: Profile.Options, nonce: (mode: NonceMode, value: String)?) -> [String] {
        var args = ["--provider", options.provider.rawValue]
        if let projectID = options.projectID { args += ["--project-id", projectID] }
        if let projectNumber = options.projectNumber { args += ["--project-number", projectNumber] }
        for value in options.appIDs { args += ["--app-id", value] }
        for value in options.hostedDomains { args += ["--hosted-domain", value] }
        for tenant in options.tenants { args += ["--tenant", tenant] }
        if options.anyTenant { args.append("--any-tenant") }
        if options.entraV1 { args.append("--entra-v1") }
        for value in options.allowedSignInProviders { args += ["--allow-sign-in-provider", value] }
        for value in options.audiences { args += ["--audience", value] }
        for value in options.issuers { args += ["--issuer", value] }
        for value in options.algorithms { args += ["--algorithm", value] }
        if let jwksURL = options.jwksURL { args += ["--jwks-url", jwksURL] }
        if let leeway = options.leeway { args.append("--leeway=\(leeway)") }
        for claim in options.requiredClaims {
            for value in claim.values { args += ["--require-claim", claim.name + "=" + value] }
        }
        if let nonce { args += [nonce.mode == .sha256Hex ? "--nonce" : "--nonce-exact", nonce.value] }
        return args
    }

    /// The configuration file that says what `options` say.
    static func configuration(_ options: Profile.Options, keys: String) -> String {
        func list(_ values: [String]) -> String { "[" + values.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        var members = ["\"name\": \"p\"", "\"provider\": \"\(options.provider.rawValue)\"", "\"keys\": \"\(keys)\""]
        if let projectID = options.projectID { members.append("\"projectId\": \"\(projectID)\"") }
        if let projectNumber = options.projectNumber { members.append("\"projectNumber\": \"\(projectNumber)\"") }
        if !options.appIDs.isEmpty { members.append("\"appId\": \(list(options.appIDs))") }
        if !options.hostedDomains.isEmpty { members.append("\"hostedDomains\": \(list(options.hostedDomains))") }
        if !options.tenants.isEmpty {
            members.append(options.tenants.count == 1 ? "\"tenant\": \"\(options.tenants[0])\"" : "\"tenant\": \(list(options.tenants))")
        }
        if options.anyTenant { members.append("\"anyTenant\": true") }
        if options.entraV1 { members.append("\"entraV1\": true") }
        if !options.allowedSignInProviders.isEmpty { members.append("\"allowedSignInProviders\": \(list(options.allowedSignInProviders))") }
        if !options.audiences.isEmpty {
            members.append(options.provider == .facebook ? "\"appId\": \(list(options.audiences))" : "\"audiences\": \(list(options.audiences))")
        }
        if !options.issuers.isEmpty { members.append("\"issuers\": \(list(options.issuers))") }
        if !options.algorithms.isEmpty { members.append("\"algorithms\": \(list(options.algorithms))") }
        if let jwksURL = options.jwksURL { members.append("\"jwksUrl\": \"\(jwksURL)\"") }
        if let leeway = options.leeway { members.append("\"leeway\": \(leeway)") }
        if let mode = options.nonceMode { members.append("\"nonceMode\": \"\(mode.rawValue)\"") }
        if !options.requiredClaims.isEmpty {
            // A single value as a string, several as a list: the file takes both.
            let claims = options.requiredClaims.map { "\"\($0.name)\": " + ($0.values.count == 1 ? "\"\($0.values[0])\"" : list($0.values)) }
            members.append("\"claims\": {" + claims.joined(separator: ", ") + "}")
        }
        return "{\"profiles\": [{" + members.joined(separator: ", ") + "}]}"
    }

    static func code(_ body: () throws(TokenError) -> VerifiedToken) -> String? {
        do { _ = try body(); return nil } catch { return error.code.rawValue }
    }

    @Test func everyProviderHasCases() {
        for provider in Provider.allCases {
            #expect(Self.cases.filter { $0.options.provider == provider }.count >= 40, "\(provider)")
        }
    }

    @Test(arguments: cases) func sameOptionsSameProfileSameVerdict(_ test: Case) throws {
        let direct = try Profile(options: test.options)
        let commandLine = try ProfileOptions.parse(Self.arguments(test.options, nonce: test.nonce))
        #expect(try commandLine.options() == test.options)
        let file = try ConfigurationFile.parse(Array(Self.configuration(test.options, keys: test.keys).utf8), baseDirectory: "/")
        #expect(file.profiles[0].options == test.options)
        #expect(file.profiles[0].keys == [test.keys])

        let keys = try KeyFiles.load(test.keys)
        let nonce = test.nonce.map { Nonce($0.value, mode: $0.mode) }
        let now = Date(timeIntervalSince1970: test.at)
        var verdicts: [String?] = []
        for profile in [direct, try commandLine.profile(), file.profiles[0].profile] {
            #expect(profile.issuers == direct.issuers && profile.algorithms == direct.algorithms
                    && profile.audience.accepted == direct.audience.accepted && profile.leeway == direct.leeway
                    && profile.keysURL == direct.keysURL && profile.nonceMode == direct.nonceMode)
            let verifier = try IDTokenVerifier(profile: profile, keys: keys)
            verdicts.append(Self.code { () throws(TokenError) in try verifier.verify(test.token, keys: keys, now: now, nonce: nonce) })
        }
        // The audit judges with the configuration file's profile.
        let multi = try MultiProfileVerifier([.init(name: "p", verifier: try IDTokenVerifier(profile: file.profiles[0].profile, keys: keys))])
        let outcome = multi.evaluate(test.token, at: test.at, nonce: test.nonce.map { Nonce($0.value) })
        verdicts.append(outcome.isValid ? nil : outcome.error?.code.rawValue)
        #expect(verdicts.allSatisfy { $0 == test.expected }, "\(test.id): \(verdicts), expected \(test.expected ?? "valid")")
    }

    /// Options no door accepts, with the one message every door gives.
    static let refusals: [(Profile.Options, String)] = [
        (.init(provider: .firebase), "a firebase profile needs the Firebase project ID"),
        (.init(provider: .firebase, projectID: "p", audiences: ["a"]), "a Firebase token's audience is its project"),
        (.init(provider: .firebase, projectID: "p", issuers: ["https://i"]), "the firebase issuer is fixed"),
        (.init(provider: .apple, audiences: ["a"], tenant: "t"), "the tenant (--tenant, \"tenant\") applies to firebase, firebase-session and entra only"),
        (.init(provider: .apple, audiences: ["a"], allowedSignInProviders: ["apple.com"]),
         "the allowed sign-in providers (--allow-sign-in-provider, \"allowedSignInProviders\") apply to firebase and firebase-session only"),
        (.init(provider: .oidc, projectID: "p", audiences: ["a"], issuers: ["https://i"]),
         "the project ID (--project-id, \"projectId\") applies to firebase, firebase-session and firebase-app-check only"),
        (.init(provider: .firebaseAppCheck), "a firebase-app-check profile needs the Firebase project number, digits only"),
        (.init(provider: .firebaseAppCheck, projectNumber: "my-project"), "a firebase-app-check profile needs the Firebase project number, digits only"),
        (.init(provider: .firebaseAppCheck, audiences: ["a"], projectNumber: "123"), "an App Check token's audience is its project"),
        (.init(provider: .apple, audiences: ["a"], appIDs: ["1:2:ios:3"]), "apply to firebase-app-check only"),
        (.init(provider: .firebase, projectID: "p", projectNumber: "123"), "the project number (--project-number, \"projectNumber\") applies to firebase-app-check only"),
        (.init(provider: .oidc, audiences: ["a"], issuers: ["https://i"], hostedDomains: ["example.com"]), "apply to google only"),
        (.init(provider: .google, audiences: ["a"], issuers: ["https://i"]), "the google issuer is fixed"),
        (.init(provider: .google), "a google profile needs an audience (--audience, \"audiences\"): the client ID"),
        (.init(provider: .appleNotification), "an apple-notification profile needs an audience (--audience, \"audiences\"): the bundle ID or Services ID"),
        (.init(provider: .apple), "an apple profile needs an audience (--audience, \"audiences\"): the bundle ID or Services ID"),
        (.init(provider: .oidc, issuers: ["https://i"]), "an oidc profile needs an audience"),
        (.init(provider: .facebook), "a facebook profile needs an audience (--audience, \"audiences\"): the Facebook App ID; several are accepted"),
        (.init(provider: .oidc, audiences: ["a"]), "an oidc profile needs an issuer"),
        (.init(provider: .githubActions), "a github-actions profile needs an audience (--audience, \"audiences\"): the audience the workflow asks for"),
        (.init(provider: .githubActions, audiences: ["https://github.com/acme"]), "a github-actions profile would accept a token of any workflow on GitHub"),
        (.init(provider: .githubActions, audiences: ["https://github.com/acme"], requiredClaims: [.init(name: "repository", values: ["*"])]),
         "a github-actions profile would accept a token of any workflow on GitHub"),
        (.init(provider: .githubActions, audiences: ["https://github.com/acme"], requiredClaims: [.init(name: "environment", values: ["production"])]),
         "require the claims that name yours, e.g. --require-claim repository=OWNER/REPO"),
        (.init(provider: .githubActions, audiences: ["a"], issuers: ["https://token.actions.githubusercontent.com/acme"], requiredClaims: [.init(name: "repository", values: ["acme/api"])]),
         "the github-actions issuer is fixed; issuers (--issuer, \"issuers\") apply to facebook, oidc, cognito and cognito-access only"),
        (.init(provider: .entra, audiences: ["a"]), "an entra profile needs the tenant IDs whose tokens it accepts (--tenant TENANT_ID, repeatable; \"tenant\"), or, for an app open to every organisation, --any-tenant"),
        (.init(provider: .entra, audiences: ["a"], tenants: ["4f9e1a2b-0c3d-4e5f-8a7b-9c0d1e2f3a4b"], anyTenant: true),
         "give the tenants (--tenant, \"tenant\") or any tenant (--any-tenant, \"anyTenant\"), not both"),
        (.init(provider: .entra, audiences: ["a"], tenants: ["contoso.onmicrosoft.com"]), "the Entra tenant ID \"contoso.onmicrosoft.com\" (--tenant, \"tenant\") is not a GUID"),
        (.init(provider: .firebase, projectID: "p", tenants: ["t1", "t2"]), "a Firebase token belongs to one tenant: give one (--tenant, \"tenant\"), not 2"),
        (.init(provider: .google, audiences: ["a"], anyTenant: true), "any tenant (--any-tenant, \"anyTenant\") applies to entra only"),
        (.init(provider: .cognito, audiences: ["a"]), "a cognito profile needs the user pool's issuer (--issuer, \"issuers\"): https://cognito-idp.REGION.amazonaws.com/POOL_ID"),
        (.init(provider: .cognito, audiences: ["a"], issuers: ["https://cognito-idp.eu-west-1.amazonaws.com/"]),
         "a cognito profile needs one user pool issuer, https://cognito-idp.REGION.amazonaws.com/POOL_ID (--issuer, \"issuers\"), not \"https://cognito-idp.eu-west-1.amazonaws.com/\""),
        (.init(provider: .cognito, audiences: ["a"], issuers: ["https://cognito-idp.eu-west-1.amazonaws.com/p1", "https://cognito-idp.eu-west-1.amazonaws.com/p2"]),
         "a cognito profile needs one user pool issuer"),
        (.init(provider: .cognito, audiences: ["a"], issuers: ["https://login.example.com/p1"]), "a cognito profile needs one user pool issuer"),
        (.init(provider: .apple, audiences: ["a"], issuers: ["https://i"]), "the apple issuer is fixed"),
        (.init(provider: .apple, audiences: ["a"], algorithms: ["HS256"]), "unknown algorithm \"HS256\""),
        (.init(provider: .oidc, audiences: ["a"], issuers: ["https://i"], algorithms: ["none"]), "unknown algorithm \"none\""),
        (.init(provider: .apple, audiences: ["a"], leeway: 301), "the leeway must be 0 to 300 seconds, not 301"),
        (.init(provider: .apple, audiences: ["a"], leeway: -1), "the leeway must be 0 to 300 seconds, not -1"),
        (.init(provider: .apple, audiences: [""]), "none may be empty"),
        (.init(provider: .oidc, audiences: ["a"], issuers: ["https://i"], requiredClaims: [.init(name: "aud", values: ["b"])]),
         "\"aud\" cannot be a required claim (--require-claim, \"claims\"): it is checked by the audience (--audience, \"audiences\")"),
        (.init(provider: .google, audiences: ["a"], requiredClaims: [.init(name: "iss", values: ["*"])]), "\"iss\" cannot be a required claim"),
        (.init(provider: .apple, audiences: ["a"], requiredClaims: [.init(name: "exp", values: ["1"])]), "it is checked by the time rules"),
        (.init(provider: .firebase, projectID: "p", requiredClaims: [.init(name: "repository", values: [""])]),
         "the required claim \"repository\" (--require-claim, \"claims\") needs a value; * accepts any"),
        (.init(provider: .firebase, projectID: "p", requiredClaims: [.init(name: "", values: ["x"])]), "a required claim (--require-claim, \"claims\") needs a name"),
    ]

    @Test(arguments: 0..<refusals.count) func oneMessageThroughEveryDoor(_ index: Int) throws {
        let (options, message) = Self.refusals[index]
        var reasons: [String] = []
        do { _ = try Profile(options: options); Issue.record("accepted \(options)") } catch { reasons.append(error.reason) }
        let commandLine = try ProfileOptions.parse(Self.arguments(options, nonce: nil))
        do { _ = try commandLine.profile(); Issue.record("the command line accepted \(options)") } catch { reasons.append(error.reason) }
        do {
            _ = try ConfigurationFile.parse(Array(Self.configuration(options, keys: "/k.json").utf8), baseDirectory: "/")
            Issue.record("the configuration accepted \(options)")
        } catch {
            #expect(error.reason.hasPrefix("profile \"p\": "))
            reasons.append(String(error.reason.dropFirst("profile \"p\": ".count)))
        }
        #expect(reasons.count == 3 && Set(reasons).count == 1, "\(reasons)")
        #expect(reasons.first?.contains(message) == true, "\(reasons)")
    }

    @Test func requiredClaimsReadTheSameFromTheCommandLineAndTheFile() throws {
        let options = Profile.Options(provider: .oidc, audiences: ["a"], issuers: ["https://i"],
                                      requiredClaims: [.init(name: "repository", values: ["acme/api", "acme/web"]), .init(name: "ref", values: ["refs/heads/*"])])
        let commandLine = try ProfileOptions.parse(["--provider", "oidc", "--audience", "a", "--issuer", "https://i", "--require-claim", "repository=acme/api",
                                                    "--require-claim", "ref=refs/heads/*", "--require-claim", "repository=acme/web"])
        #expect(try commandLine.options() == options)
        #expect(commandLine.shapesProfile)
        let file = try ConfigurationFile.parse(Array(#"{"profiles":[{"provider":"oidc","audiences":"a","issuers":"https://i","keys":"/k.json","claims":{"repository":["acme/api","acme/web"],"ref":"refs/heads/*"}}]}"#.utf8),
                                               baseDirectory: "/")
        #expect(file.profiles[0].options == options)
        for (claims, message) in [(#""acme""#, #"profile "oidc": "claims" must be an object of claim names and their accepted values"#),
                                  (#"{"run_attempt":2}"#, #"profile "oidc" "claims": "run_attempt" must be a string or a list of strings"#)] {
            #expect(throws: ConfigurationError(message)) {
                try ConfigurationFile.parse(Array(#"{"profiles":[{"provider":"oidc","audiences":"a","issuers":"https://i","claims":\#(claims)}]}"#.utf8), baseDirectory: "/")
            }
        }
        let withoutValue = try ProfileOptions.parse(["--provider", "oidc", "--audience", "a", "--issuer", "https://i", "--require-claim", "repository"])
        #expect(throws: ConfigurationError("--require-claim repository: give NAME=VALUE (e.g. repository=acme/api; * matches any run of characters)")) {
            try withoutValue.options()
        }
    }

    @Test func facebookTakesAProductionAndATestAppID() throws {
        let options = Profile.Options(provider: .facebook, audiences: ["1111", "2222"])
        let profile = try Profile(options: options)
        #expect(profile.audience.accepted == ["1111", "2222"])
        #expect(try ProfileOptions.parse(["--provider", "facebook", "--audience", "1111", "--audience", "2222"]).options() == options)
        let file = try ConfigurationFile.parse(Array(#"{"profiles":[{"provider":"facebook","appId":["1111","2222"]}]}"#.utf8), baseDirectory: "/")
        #expect(file.profiles[0].options == options)
        let viaAudiences = try ConfigurationFile.parse(Array(#"{"profiles":[{"provider":"facebook","audiences":["1111","2222"]}]}"#.utf8), baseDirectory: "/")
        #expect(viaAudiences.profiles[0].options == options)
    }

    @Test func theCommandLineAndTheFileNameAProviderTheSameWay() throws {
        let commandLine = try ProfileOptions.parse(["--provider", "myspace"])
        var reasons: [String] = []
        do { _ = try commandLine.options() } catch { reasons.append(error.reason) }
        do { _ = try ConfigurationFile.parse(Array(#"{"profiles":[{"provider":"myspace"}]}"#.utf8), baseDirectory: "/") } catch {
            reasons.append(String(error.reason.dropFirst("profile 1: ".count)))
        }
        #expect(reasons.count == 2 && reasons[0] == reasons[1] && reasons[0].hasPrefix("unknown provider \"myspace\""), "\(reasons)")
    }

    @Test func twoNoncesAreRefusedByTheOptionGroup() {
        #expect(throws: (any Error).self) { try ProfileOptions.parse(["--provider", "apple", "--nonce", "a", "--nonce-exact", "b"]) }
    }
}
