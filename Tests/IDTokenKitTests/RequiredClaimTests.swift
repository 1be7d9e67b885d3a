@testable import IDTokenKit
import JOSE
import Testing

/// The claims a profile requires (`--require-claim NAME=VALUE`, `"claims"`): ``AllowedValuesRule`` with
/// ``AllowedValuesRule/Matching/patterns``. The generated vectors (`oidc/claims-*`) carry the verdicts through every
/// door; these pin the pattern scan and the typed comparisons.
@Suite struct RequiredClaimTests {
    static func matches(_ text: String, _ pattern: String) -> Bool {
        AllowedValuesRule.matches(Array(text.utf8), pattern: Array(pattern.utf8))
    }

    @Test func aStarMatchesAnyRunAndTheRestMatchesItself() {
        let yes: [(String, String)] = [
            ("acme/api", "acme/api"), ("acme/api", "acme/*"), ("acme/api", "*"), ("", "*"), ("", "**"), ("acme/api", "*/api"),
            ("refs/heads/main", "refs/*/main"), ("aXbYbZc", "a*b*c"), ("abcbc", "a*bc"), ("a/b/c", "a*c"), ("a*b", "a*b"),
            ("acme/ci/.github/workflows/deploy.yml@refs/heads/main", "acme/ci/.github/workflows/*.yml@refs/heads/*"),
            ("🙂 x", "* x"), ("mississippi", "*sip*"), ("mississippi", "m*iss*ppi"),
        ]
        for (text, pattern) in yes { #expect(Self.matches(text, pattern), "\(text) ~ \(pattern)") }
        let no: [(String, String)] = [
            ("acme/api", "acme/ap"), ("acme/api", "cme/api"), ("acme/api", "ACME/api"), ("", "a"), ("a", ""), ("abc", "a*d"),
            ("refs/heads/main", "refs/tags/*"), ("aXbYb", "a*b*c"), ("acme/api", "acme/api/*"), ("mississippi", "m*iss*ppix"),
        ]
        for (text, pattern) in no { #expect(!Self.matches(text, pattern), "\(text) !~ \(pattern)") }
    }

    @Test func aLongHostileValueIsScannedInBoundedSteps() {
        // The scan returns to the last star only: a pattern of many stars against a long near-miss is quadratic at
        // worst, not exponential.
        let text = String(repeating: "a", count: 20_000) + "b"
        #expect(!Self.matches(text, String(repeating: "*a", count: 30) + "c"))
        #expect(Self.matches(text, String(repeating: "*a", count: 30) + "*b"))
    }

    static func check(_ claims: String, _ name: String, _ values: [String]) -> String? {
        let rule = AllowedValuesRule(name, oneOf: values, required: true, matching: .patterns)
        let context = ClaimContext(now: 0, leeway: 60, tokenName: "ID token")
        do {
            try rule.check(try! JSONObject.parse(claims), context)
            return nil
        } catch {
            #expect(error.claim == name)
            return error.message
        }
    }

    @Test func eachKindOfClaimIsComparedByItsValue() {
        #expect(Self.check(#"{"v":true}"#, "v", ["true"]) == nil)
        #expect(Self.check(#"{"v":"true"}"#, "v", ["true"]) == nil)
        #expect(Self.check(#"{"v":false}"#, "v", ["true"])?.contains(#"has "v" false, but only "true" is accepted"#) == true)
        // A boolean or a number is not matched by a pattern: `t*` does not accept true.
        #expect(Self.check(#"{"v":true}"#, "v", ["t*"]) != nil)
        #expect(Self.check(#"{"v":2}"#, "v", ["2"]) == nil)
        #expect(Self.check(#"{"v":-2}"#, "v", ["-2"]) == nil)
        #expect(Self.check(#"{"v":2.0}"#, "v", ["2"])?.contains("must be a string, a boolean, an integer or an array of strings") == true)
        #expect(Self.check(#"{"v":["a","b"]}"#, "v", ["b"]) == nil)
        #expect(Self.check(#"{"v":["a","b"]}"#, "v", ["c", "a*"]) == nil)
        #expect(Self.check(#"{"v":[]}"#, "v", ["*"]) != nil)
        #expect(Self.check(#"{"v":["a",1]}"#, "v", ["a"])?.contains("must be an array of strings") == true)
        #expect(Self.check(#"{"v":{"a":1}}"#, "v", ["*"])?.contains("must be a string, a boolean, an integer or an array of strings") == true)
        #expect(Self.check(#"{"v":null}"#, "v", ["*"]) != nil)
        #expect(Self.check(#"{"w":"x"}"#, "v", ["*"])?.contains(#"has no "v" claim"#) == true)
        // Escapes are decoded before the comparison.
        #expect(Self.check(#"{"v":"acme\/api"}"#, "v", ["acme/*"]) == nil)
    }

    @Test func theProfileAddsOneRuleAClaimAfterTheProvidersOwn() throws {
        let options = Profile.Options(provider: .oidc, audiences: ["a"], issuers: ["https://i"],
                                      requiredClaims: [.init(name: "repository", values: ["acme/api", "acme/web"]), .init(name: "ref", values: ["refs/heads/*"])])
        let profile = try Profile(options: options)
        let added = profile.rules.compactMap { $0 as? AllowedValuesRule }.filter { $0.matching == .patterns }
        #expect(added.map(\.name) == ["repository", "ref"])
        #expect(added[0].values == ["acme/api", "acme/web"] && added.allSatisfy { $0.required && $0.dependsOnlyOnClaims })
        #expect(try Profile(options: Profile.Options(provider: .oidc, audiences: ["a"], issuers: ["https://i"])).rules.count == profile.rules.count - 2)
    }

    @Test func requirementsAreReadAsNameEqualsValueAndGatheredByName() throws {
        let claims = try Profile.Options.requiredClaims(parsing: ["repository=acme/api", "ref=refs/heads/main", "repository=acme/web", "sub=repo:acme/api:ref=x"])
        #expect(claims == [.init(name: "repository", values: ["acme/api", "acme/web"]), .init(name: "ref", values: ["refs/heads/main"]),
                           .init(name: "sub", values: ["repo:acme/api:ref=x"])])
        #expect(throws: ConfigurationError.self) { try Profile.Options.requiredClaims(parsing: ["repository"]) }
    }
}
