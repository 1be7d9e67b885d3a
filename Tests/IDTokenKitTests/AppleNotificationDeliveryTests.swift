import Foundation
import IDTokenKit
import Testing

/// The body Sign in with Apple posts to a notification endpoint, read and verified by
/// ``MultiProfileVerifier/verifyAppleNotification(body:now:)``: the one decision the Vapor and Hummingbird routes map.
@Suite struct AppleNotificationDeliveryTests {
    static func valid(_ file: String) throws -> (token: String, keys: JWKSet, at: Date) {
        let test = try #require(VectorCase.load("generated/\(file).json").first { $0.id == "\(file)/valid" })
        return (try #require(test.json["token"]?.string), try VectorFiles.keySet(try #require(test.json["keys"])),
                Date(timeIntervalSince1970: Double(try #require(test.json["at"]?.int64))))
    }

    static func code(_ body: () throws(TokenError) -> String) -> TokenError.Code? {
        do { _ = try body(); return nil } catch { return error.code }
    }

    @Test func onlyApplesBodyShapeIsRead() throws {
        #expect(try AppleNotificationDelivery.payload(ofBody: Array("{\"payload\": \"a.b.c\"}".utf8)) == "a.b.c")
        for body in ["payload=a.b.c", "{\"payload\": 5}", "{\"payload\": \"\"}", "{\"signedPayload\": \"a.b.c\"}", "[\"a.b.c\"]", ""] {
            #expect(Self.code { () throws(TokenError) in try AppleNotificationDelivery.payload(ofBody: Array(body.utf8)) } == .malformed, "\(body)")
        }
        let huge = Array("{\"payload\": \"".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: AppleNotificationDelivery.maxBodyBytes) + Array("\"}".utf8)
        #expect(Self.code { () throws(TokenError) in try AppleNotificationDelivery.payload(ofBody: huge) } == .tokenTooLarge)
    }

    @Test func aNotificationIsNewOnceThenRepeated() async throws {
        let (token, keys, at) = try Self.valid("apple-notification")
        let verifier = MultiProfileVerifier(try IDTokenVerifier(profile: .appleNotification(clientIDs: ["com.example.idtk.ios"]),
                                                                keys: StaticKeySource(keys), replayCache: MemoryReplayCache(capacity: 10)))
        let body = Array("{\"payload\":\"\(token)\"}".utf8)
        guard case .new(let verified, let event) = try await verifier.verifyAppleNotification(body: body, now: at) else {
            Issue.record("the first delivery is not new")
            return
        }
        #expect(event.type == .emailDisabled && event.isPrivateEmail == true && event.email?.hasSuffix("@privaterelay.appleid.com") == true)
        #expect(verified.subject == event.subject && verified.provider == .appleNotification)
        guard case .repeated = try await verifier.verifyAppleNotification(body: body, now: at) else {
            Issue.record("the second delivery is not a repeat")
            return
        }
    }

    @Test func aTokenThatIsNoNotificationIsRefused() async throws {
        let (token, keys, at) = try Self.valid("apple")
        let verifier = MultiProfileVerifier(try IDTokenVerifier(profile: .apple(clientIDs: ["com.example.idtk.ios"]), keys: StaticKeySource(keys)))
        do {
            _ = try await verifier.verifyAppleNotification(body: Array("{\"payload\":\"\(token)\"}".utf8), now: at)
            Issue.record("an identity token was taken for a notification")
        } catch {
            #expect(error.code == .wrongIssuer)
        }
    }
}
