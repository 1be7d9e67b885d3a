import JOSE
import Testing
import TestSupport

/// A token's claims are indexed into room its decoded storage keeps for them, by the first reading only: every
/// reading, first or later, on one thread or many at once, and with more members than the room holds, must see
/// the same claims.
@Suite struct ClaimsStorageTests {
    static func token(payload: String) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#.utf8))
        return header + "." + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode([UInt8](repeating: 7, count: 256))
    }

    static let firebaseLike = #"""
    {"iss":"https://securetoken.google.com/p","aud":"p","auth_time":1767172676,"user_id":"u1","sub":"u1",
     "iat":1767230166,"exp":1767233766,"email":"ada@example.com","email_verified":true,
     "firebase":{"identities":{"email":["ada@example.com"]},"sign_in_provider":"password"}}
    """#

    static func summary(_ claims: JSONObject) -> [String] {
        claims.entries.map { "\($0.key)=\($0.value.rawJSON)" }
            + [claims["firebase"]?.object?["sign_in_provider"]?.string ?? "-"]
    }

    @Test func everyReadingSeesTheSameClaims() throws {
        let jws = try CompactJWS(Self.token(payload: Self.firebaseLike))
        let first = try jws.claims()
        let second = try jws.claims()
        let copy = jws
        let third = try copy.claims()
        let expected = Self.summary(try JSONObject.parse(Self.firebaseLike))
        #expect(Self.summary(first) == expected)
        #expect(Self.summary(second) == expected)
        #expect(Self.summary(third) == expected)
        #expect(first.number(JSONKey("exp")) == .integer(1_767_233_766))
        #expect(third.string(JSONKey("iss"), isOneOf: ["https://securetoken.google.com/p"]) == true)
    }

    /// More members than the room holds (it has room for 32): the reader moves to the heap and the claims get a
    /// table of their own; nested objects and the members after the switch are all there.
    @Test func moreMembersThanTheRoomHolds() throws {
        for count in [31, 32, 33, 64, 500] {
            let members = (0..<count).map { "\"m\($0)\":{\"v\":\($0)}" }.joined(separator: ",")
            let payload = "{\"sub\":\"u\"," + members + "}"
            let jws = try CompactJWS(Self.token(payload: payload))
            for reading in 0..<2 {
                let claims = try jws.claims()
                #expect(claims.count == count + 1, "count \(count), reading \(reading)")
                for k in [0, count / 2, count - 1] {
                    #expect(claims["m\(k)"]?.object?.number(JSONKey("v")) == .integer(Int64(k)), "count \(count), member \(k)")
                }
                #expect(claims["sub"]?.string == "u")
            }
        }
    }

    /// Many threads read the claims of one split token at the same moment: one of them fills the room, the
    /// others make tables of their own, and all see the same claims (the thread sanitizer run,
    /// scripts/sanitize thread, checks that nobody reads the room while it is being filled).
    @Test func concurrentFirstReadings() throws {
        let expected = Self.summary(try JSONObject.parse(Self.firebaseLike))
        for _ in 0..<50 {
            let jws = try CompactJWS(Self.token(payload: Self.firebaseLike))
            let seen = raceOnThreads(4) { _ in (try? jws.claims()).map(Self.summary) ?? [] }
            #expect(seen.allSatisfy { $0 == expected })
        }
    }

    /// A payload that is not valid JSON spends the room: later readings still refuse it, with the same error.
    @Test func refusedPayloadStaysRefused() throws {
        let jws = try CompactJWS(Self.token(payload: #"{"sub":"u","sub":"v"}"#))
        for _ in 0..<3 {
            #expect(throws: TokenError.self) { try jws.claims() }
        }
    }
}
