import Foundation
import IDTokenAudit
import IDTokenConfiguration
import IDTokenKit
import Testing

@Suite("Multi-provider audits from a configuration file")
struct ConfigurationTests {
    @Test("tokens of three providers are routed by issuer to their profiles")
    func routing() throws {
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: try Sample.verifier())
        for result in run.results where result.isValid {
            let expected = ["https://securetoken.google.com/idtokenkit-sample": "firebase",
                            "https://appleid.apple.com": "apple", "https://www.facebook.com": "facebook"][result.claims.issuer ?? ""]
            #expect(result.profile == expected)
        }
        #expect(Set(run.results.filter(\.isValid).compactMap(\.profile)) == ["firebase", "apple", "facebook"])
    }

    @Test("a token whose issuer has no profile is wrong_issuer")
    func unknownIssuer() throws {
        let tokens = try Sample.validTokens()
        let (apple, claims) = try #require(tokens["apple"])
        let at = Double(try #require(claims["iat"] as? Int)) + 1
        let config = """
        {"profiles": [
          {"provider": "firebase", "projectId": "idtokenkit-sample", "keys": "keys/firebase.json"},
          {"provider": "facebook", "appId": "1234567890123456", "keys": "keys/facebook.json"}
        ]}
        """
        let configuration = try ConfigurationFile.parse(Array(config.utf8), baseDirectory: Sample.directory)
        let verifier = try MultiProfileVerifier(configuration.profiles.map {
            .init(name: $0.name, verifier: try IDTokenVerifier(profile: $0.profile, keys: try KeyFiles.load($0.keys[0])))
        })
        let (firebase, _) = try #require(tokens["firebase"])
        let run = try AuditRun(Array([record(apple, at: at), firebase].joined(separator: "\n").utf8), verifier: verifier)
        #expect(run.results[0].error?.code == .wrongIssuer)
        #expect(run.results[0].error?.message.contains("https://appleid.apple.com") == true)
        #expect(run.results[0].claims.issuer == "https://appleid.apple.com")
        #expect(run.results[0].signatureVerified == false)
        #expect(run.results[1].profile == "firebase")
    }

    @Test("with one profile, the other providers' tokens are refused by that profile's verifier")
    func singleProfile() throws {
        let verifier = try MultiProfileVerifier([.init(verifier: try IDTokenVerifier(profile: .firebase(projectID: "idtokenkit-sample"),
                                                                                    keys: try KeyFiles.load(Sample.directory + "/keys/firebase.json")))])
        let run = try AuditRun(try Sample.bytes(Sample.log), verifier: verifier)
        // Their kid is not in Firebase's key set, and the key is looked up before the claims are read.
        let foreign = run.results.filter { $0.claims.issuer == "https://appleid.apple.com" || $0.claims.issuer == "https://www.facebook.com" }
        #expect(foreign.count > 40)
        #expect(foreign.allSatisfy { !$0.isValid })
        #expect(foreign.filter { $0.error?.code == .unknownKey }.count > 40)
        #expect(run.results.filter(\.isValid).allSatisfy { $0.claims.issuer == "https://securetoken.google.com/idtokenkit-sample" })
        #expect(run.results.filter(\.isValid).count > 20)
    }

    @Test("the configuration's time, leeway, names and key paths are read")
    func parse() throws {
        let configuration = try ConfigurationFile.load(path: Sample.config)
        #expect(configuration.at == Sample.at)
        #expect(configuration.profiles.map(\.name) == ["firebase", "apple", "facebook"])
        #expect(configuration.profiles[0].keys == [Sample.directory + "/keys/firebase.json"])
        #expect(configuration.profiles.allSatisfy { $0.profile.leeway.seconds == 60 })
        let oidc = try ConfigurationFile.parse(Array("""
        {"leeway": 30, "profiles": [{"name": "ci", "provider": "oidc", "issuers": ["https://issuer.example"], "audiences": "api",
          "algorithms": ["ES256"], "leeway": 10, "keys": ["/abs/keys.json", "https://issuer.example/jwks"]}]}
        """.utf8), baseDirectory: "/base")
        #expect(oidc.profiles[0].name == "ci")
        #expect(oidc.profiles[0].profile.algorithms == [.es256])
        #expect(oidc.profiles[0].profile.leeway.seconds == 10)
        #expect(oidc.profiles[0].keys == ["/abs/keys.json", "https://issuer.example/jwks"])
    }

    @Test("mistakes in a configuration are refused with a reason",
          arguments: [
            ("{\"profiles\": []}", "profiles"),
            ("{\"profiles\": [{\"provider\": \"firebase\"}]}", "projectId"),
            ("{\"profiles\": [{\"provider\": \"myspace\"}]}", "unknown provider"),
            ("{\"profiles\": [{\"provider\": \"apple\", \"audience\": [\"x\"]}]}", "unknown member"),
            ("{\"profiles\": [{\"provider\": \"apple\", \"audiences\": [\"x\"], \"keys\": \"k\"}, {\"provider\": \"apple\", \"audiences\": [\"y\"], \"keys\": \"k\"}]}", "named"),
            ("{\"profiles\": [{\"provider\": \"apple\", \"audiences\": [\"x\"], \"leeway\": 999}]}", "leeway"),
            ("{\"profiles\": [{\"provider\": \"oidc\", \"issuers\": [\"i\"], \"audiences\": [\"a\"], \"algorithms\": [\"HS256\"]}]}", "algorithm"),
            ("{\"profiles\": [{\"provider\": \"oidc\", \"issuers\": [\"i\"], \"audiences\": [\"a\"]}]}", "keys"),
            ("{\"at\": \"soon\", \"profiles\": [{\"provider\": \"apple\", \"audiences\": [\"x\"]}]}", "\"at\" must be Unix seconds or an RFC 3339 time"),
            ("{\"at\": 1e30, \"profiles\": [{\"provider\": \"apple\", \"audiences\": [\"x\"]}]}", "\"at\" must be Unix seconds"),
            ("{\"profiles\": [{\"provider\": \"apple\", \"audiences\": [\"a\"], \"appId\": [\"x\"]}]}", "apply to firebase-app-check only"),
            ("{\"profiles\": [{\"provider\": \"facebook\", \"appId\": \"x\", \"audiences\": \"y\"}]}", "not both"),
            ("{\"profiles\": [{\"provider\": \"apple\", \"audiences\": \"x\", \"nonceMode\": \"hash\"}]}", "nonceMode"),
            ("{\"profiles\": [{\"provider\": \"apple\", \"audiences\": \"x\", \"name\": 7}]}", "\"name\" must be a non-empty string"),
            ("{\"profiles\": [{\"provider\": \"apple\", \"audiences\": \"x\", \"keys\": 7}]}", "\"keys\" must be a string or a list"),
          ])
    func refused(_ text: String, _ reason: String) {
        #expect {
            _ = try ConfigurationFile.parse(Array(text.utf8), baseDirectory: ".")
        } throws: { error in
            (error as? ConfigurationError)?.reason.contains(reason) == true
        }
    }

    @Test("a top-level serve object is kept as read for idtoken serve; other unknown members are refused by name")
    func serve() throws {
        let text = """
        {"serve": {"listen": "127.0.0.1:8080", "routes": [{"path": "/verify", "profile": "apple"}]},
         "profiles": [{"provider": "apple", "audiences": "x", "keys": "k.json"}]}
        """
        let configuration = try ConfigurationFile.parse(Array(text.utf8), baseDirectory: "/base")
        let serve = try #require(configuration.serve)
        #expect(serve["listen"]?.string == "127.0.0.1:8080")
        #expect(serve["routes"]?.array?.first?["profile"]?.string == "apple")
        #expect(try ConfigurationFile.parse(Array(#"{"profiles":[{"provider":"apple","audiences":"x","keys":"k"}]}"#.utf8), baseDirectory: "/").serve == nil)
        for (bad, reason) in [(#"{"serve": [], "profiles": [{"provider": "apple", "audiences": "x", "keys": "k"}]}"#, "\"serve\" must be a JSON object"),
                              (#"{"serv": {}, "profiles": [{"provider": "apple", "audiences": "x", "keys": "k"}]}"#, "unknown member \"serv\"")] {
            #expect { _ = try ConfigurationFile.parse(Array(bad.utf8), baseDirectory: "/") } throws: { error in
                (error as? ConfigurationError)?.reason.contains(reason) == true
            }
        }
    }

    @Test("the configuration's at is read by the one time parser", arguments: [
        ("\"2026-01-01T12:00:00Z\"", 1_767_268_800.0), ("\"2026-01-01 12:00:00\"", 1_767_268_800), ("1767268800", 1_767_268_800),
    ])
    func at(_ json: String, _ seconds: Double) throws {
        let text = "{\"at\": \(json), \"profiles\": [{\"provider\": \"apple\", \"audiences\": \"x\", \"keys\": \"k\"}]}"
        #expect(try ConfigurationFile.parse(Array(text.utf8), baseDirectory: "/").at == seconds)
        #expect(try ConfigurationFile.parse(Array(text.utf8), baseDirectory: "/").at == UnixTime.parse("2026-01-01 12:00:00"))
    }

    @Test("two profiles that accept the same issuer are refused")
    func duplicateIssuer() throws {
        let keys = try KeyFiles.load(Sample.directory + "/keys/apple.json")
        let a = MultiProfileVerifier.Member(name: "a", verifier: try IDTokenVerifier(profile: .apple(clientIDs: ["x"]), keys: keys))
        let b = MultiProfileVerifier.Member(name: "b", verifier: try IDTokenVerifier(profile: .apple(clientIDs: ["y"]), keys: keys))
        #expect(throws: ConfigurationError.self) { try MultiProfileVerifier([a, b]) }
    }
}
