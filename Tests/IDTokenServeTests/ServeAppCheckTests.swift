import Foundation
import IDTokenConfiguration
import IDTokenKit
import IDTokenServe
import Testing

/// `serve.appCheck`: every `/verify` request carries a Firebase App Check token beside the ID token, each judged by
/// its own profile and refused with its own code, over real HTTP.
@Suite(.serialized) struct ServeAppCheckTests {
    static let serve = "{\"appCheck\": {\"profile\": \"app-check\"}}"

    @Test func bothTokensValidPassTheAppOnToo() async throws {
        let fixture = try await ServeFixture(serve: Self.serve, appCheck: true)
        defer { Task { await fixture.stop() } }
        let response = try await fixture.verify(ServeFixture.firebaseToken(), headers: ["X-Firebase-AppCheck: " + ServeFixture.appCheckToken()])
        #expect(response.status == 200)
        #expect(response.header("X-Auth-Subject") == "user-1")
        #expect(response.header("X-Auth-Provider") == "firebase")
        #expect(response.header("X-Auth-App-Id") == ServeFixture.appCheckAppID)
        #expect(response.header("X-Auth-Error-Token") == nil)
    }

    @Test func aMissingAppCheckTokenIsAChallengeNamingIt() async throws {
        let fixture = try await ServeFixture(serve: Self.serve, appCheck: true)
        defer { Task { await fixture.stop() } }
        for headers in [[], ["X-Firebase-AppCheck:  "]] {
            let response = try await fixture.verify(ServeFixture.firebaseToken(), headers: headers)
            #expect(response.status == 401)
            #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(response.header("X-Auth-Error-Token") == "app-check")
            #expect(response.header("X-Auth-Subject") == nil)
        }
    }

    @Test func eachTokenIsRefusedWithItsOwnCode() async throws {
        let fixture = try await ServeFixture(serve: Self.serve, appCheck: true)
        defer { Task { await fixture.stop() } }
        let good = ServeFixture.appCheckToken()
        let rows: [(id: String, appCheck: String, status: Int, code: String, token: String)] = [
            (ServeFixture.firebaseToken(), ServeFixture.appCheckToken(exp: ServeFixture.now - 600), 401, "expired", "app-check"),
            (ServeFixture.firebaseToken(), ServeFixture.appCheckToken(app: "1:123456789012:web:ffff"), 401, "invalid_claim", "app-check"),
            (ServeFixture.firebaseToken(), ServeFixture.appCheckToken(type: "at+jwt"), 401, "unsupported_header", "app-check"),
            // The ID token where the App Check token belongs: its header has no "typ": "JWT" (and its audience and
            // issuer are another profile's).
            (ServeFixture.firebaseToken(), ServeFixture.firebaseToken(), 401, "unsupported_header", "app-check"),
            (ServeFixture.firebaseToken(exp: ServeFixture.now - 600), good, 401, "expired", "id-token"),
            (ServeFixture.firebaseToken(tenant: "t2"), good, 403, "tenant_mismatch", "id-token"),
            // The App Check token in Authorization too: it identifies no user.
            (good, good, 401, "wrong_issuer", "id-token"),
        ]
        for row in rows {
            let response = try await fixture.verify(row.id, headers: ["X-Firebase-AppCheck: " + row.appCheck])
            #expect(response.status == row.status, "\(row.code) \(row.token)")
            #expect(response.header("X-Auth-Error") == row.code, "\(row.code) \(row.token)")
            #expect(response.header("X-Auth-Error-Token") == row.token, "\(row.code) \(row.token)")
            #expect(response.header("X-Auth-Subject") == nil && response.header("X-Auth-App-Id") == nil)
        }
    }

    @Test func twoAppCheckHeadersAreABadRequest() async throws {
        let fixture = try await ServeFixture(serve: Self.serve, appCheck: true)
        defer { Task { await fixture.stop() } }
        let token = ServeFixture.appCheckToken()
        let response = try await fixture.verify(ServeFixture.firebaseToken(),
                                                headers: ["X-Firebase-AppCheck: " + token, "x-firebase-appcheck: " + token])
        #expect(response.status == 400)
    }

    /// HTTP's optional whitespace around the App Check value goes (a door other than the HTTP parser, such as Envoy's
    /// header map, may leave it); other whitespace is part of the value, which is then no token.
    @Test func spacesAndTabsAroundTheAppCheckValueGoOtherWhitespaceStays() async throws {
        let (service, directory) = try ServeFixture.service(serve: Self.serve, appCheck: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let id = "Bearer " + ServeFixture.firebaseToken(), appCheck = ServeFixture.appCheckToken()
        let padded = await service.respond(to: ServeRequest(target: "/verify", authorization: id, appCheck: " \t" + appCheck + "\t "))
        #expect(padded.status == 200)
        #expect(padded.headers.first { $0.0 == "X-Auth-App-Id" }?.1 == ServeFixture.appCheckAppID)
        let noBreak = await service.respond(to: ServeRequest(target: "/verify", authorization: id, appCheck: "\u{00A0}" + appCheck))
        #expect(noBreak.status == 401)
        #expect(noBreak.headers.first { $0.0 == "X-Auth-Error-Token" }?.1 == "app-check")
        let blank = await service.respond(to: ServeRequest(target: "/verify", authorization: id, appCheck: " \t "))
        #expect(blank.status == 401)
        #expect(blank.headers.first { $0.0 == "X-Auth-Error" } == nil)
        #expect(blank.headers.first { $0.0 == "X-Auth-Error-Token" }?.1 == "app-check")
    }

    @Test func withoutTheSettingTheHeaderIsIgnored() async throws {
        let fixture = try await ServeFixture(appCheck: true)
        defer { Task { await fixture.stop() } }
        let response = try await fixture.verify(ServeFixture.firebaseToken(), headers: ["X-Firebase-AppCheck: not-a-token"])
        #expect(response.status == 200)
        #expect(response.header("X-Auth-App-Id") == nil)
    }

    @Test func theSettingMustNameAnAppCheckProfile() throws {
        #expect(throws: ConfigurationError.self) { _ = try ServeFixture.service(serve: "{\"appCheck\": {\"profile\": \"corp\"}}", appCheck: true) }
        #expect(throws: ConfigurationError.self) { _ = try ServeFixture.service(serve: "{\"appCheck\": {\"profile\": \"nope\"}}", appCheck: true) }
        #expect(throws: ConfigurationError.self) {
            _ = try ServeFixture.service(serve: "{\"appCheck\": {\"profile\": \"app-check\", \"header\": \"Authorization\"}}", appCheck: true)
        }
        #expect(throws: ConfigurationError.self) {
            _ = try ServeFixture.service(serve: "{\"appCheck\": {\"profile\": \"app-check\", \"extra\": 1}}", appCheck: true)
        }
    }
}
