@testable import IDTokenServe
import NIOCore
import Testing

/// The gRPC door's reading of Envoy's `CheckRequest` from protobuf bytes (the fields it takes, the rest skipped, bytes
/// that are not a message refused), on messages built here field by field. The whole contract, both directions, is
/// checked against grpcio's own encoding by scripts/check_grpc.py.
struct ExternalAuthorizationTests {
    let door: ExternalAuthorization = {
        var settings = ServeSettings()
        settings.appCheckProfile = "app-check"
        return ExternalAuthorization(settings: settings)
    }()

    // A protobuf writer for the test's messages: length-delimited fields and varints.
    static func field(_ number: Int, _ bytes: [UInt8]) -> [UInt8] { [UInt8(number << 3 | 2)] + varint(bytes.count) + bytes }
    static func field(_ number: Int, _ text: String) -> [UInt8] { field(number, Array(text.utf8)) }
    static func varint(_ value: Int) -> [UInt8] {
        var value = value, out: [UInt8] = []
        while value >= 0x80 { out.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
        return out + [UInt8(value)]
    }
    static func entry(_ key: String, _ value: String) -> [UInt8] { field(1, key) + field(2, value) }

    /// CheckRequest { attributes (1) { request (4) { http (2) { … } }, context_extensions (10) } }.
    static func checkRequest(http: [UInt8], extensions: [UInt8] = [], around: [UInt8] = []) -> [UInt8] {
        field(1, around + field(4, field(1, [0x08, 0x01]) + field(2, http)) + extensions)
    }

    func read(_ message: [UInt8]) throws -> ServeRequest {
        try message.withUnsafeBytes { bytes in try door.request(fromMessage: bytes) }
    }

    @Test func readsTheHeadersMapAndPath() throws {
        let http = Self.field(2, "GET") + Self.field(3, Self.entry("authorization", "Bearer a.b.c"))
            + Self.field(3, Self.entry("x-idtoken-nonce", "n-1")) + Self.field(3, Self.entry("user-agent", "curl"))
            + Self.field(3, Self.entry("cookie", "__session=s")) + Self.field(3, Self.entry("x-firebase-appcheck", "app.check.token"))
            + Self.field(4, "/orders/7") + [0x48, 0x96, 0x01]   // size (9): a varint, skipped
        // Fields the door does not read, of every wire type, around the ones it does.
        let around = Self.field(1, Self.field(1, "peer")) + [0x2D, 1, 2, 3, 4] + [0x31, 1, 2, 3, 4, 5, 6, 7, 8]
        let request = try read(Self.checkRequest(http: http, around: around))
        #expect(request.target == "/verify/orders/7")
        #expect(request.authorization == "Bearer a.b.c")
        #expect(request.nonce == "n-1")
        #expect(request.cookie == "__session=s")
        #expect(request.appCheck == "app.check.token")
    }

    @Test func theLastEntryOfARepeatedKeyWins() throws {
        let http = Self.field(3, Self.entry("authorization", "Bearer first")) + Self.field(3, Self.entry("authorization", "Bearer last"))
        #expect(try read(Self.checkRequest(http: http)).authorization == "Bearer last")
    }

    /// Read lending its bearer token (the gRPC door's way), a message says what it says read as text: the lent bytes are
    /// exactly the token BearerToken finds in the `authorization` value, nothing else of the request differs, and a value
    /// of any other form, or one from the `header_map` list, is kept as text.
    @Test func theBearerTokenLentFromTheMessageIsTheOneReadAsText() throws {
        func header(_ key: String, raw: String) -> [UInt8] { Self.field(1, Self.field(1, key) + Self.field(3, raw)) }
        let others = Self.field(3, Self.entry("cookie", "__session=s")) + Self.field(3, Self.entry("x-idtoken-nonce", "n-1"))
            + Self.field(4, "/orders/7")
        let cases: [(http: [UInt8], lent: String?)] = [
            (Self.field(3, Self.entry("authorization", "Bearer a.b.c")) + others, "a.b.c"),
            (Self.field(3, Self.entry("authorization", "bearer   a.b.c  ")) + others, "a.b.c"),
            (Self.field(3, Self.entry("authorization", "Basic dXNlcjpwYXNz")) + others, nil),
            (Self.field(3, Self.entry("authorization", "Bearer a b")) + others, nil),
            (Self.field(3, Self.entry("authorization", "Bearer a.b.\u{e9}")) + others, nil),
            (Self.field(3, Self.entry("authorization", "Bearer ")) + others, nil),
            // The last entry wins, whichever way either is read.
            (Self.field(3, Self.entry("authorization", "Bearer x.y.z")) + Self.field(3, Self.entry("authorization", "Basic q")), nil),
            (Self.field(3, Self.entry("authorization", "Basic q")) + Self.field(3, Self.entry("authorization", "Bearer x.y.z")), "x.y.z"),
            (Self.field(3, Self.entry("authorization", "Bearer x.y.z")) + Self.field(3, Self.entry("authorization", "Bearer u.v.w")), "u.v.w"),
            // The header_map list (its repeated entries are joined) is read as text.
            (Self.field(13, header("Authorization", raw: "Bearer raw.value.here")), nil),
            (others, nil),
        ]
        for (http, lent) in cases {
            let message = Self.checkRequest(http: http)
            let text = try read(message)
            let (request, range) = try message.withUnsafeBytes { bytes in
                let (request, range) = try door.request(fromMessage: bytes, lendingBearerToken: true)
                return (request, range.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) })
            }
            #expect(range == lent, "\(String(decoding: http, as: UTF8.self))")
            #expect(request.lendsBearerToken == (lent != nil))
            #expect(request.hasAuthorization == text.hasAuthorization)
            if lent != nil {
                #expect(request.authorization == nil)
                #expect(text.authorizationToken == lent)
            } else {
                #expect(request.authorization == text.authorization)
            }
            #expect(request.target == text.target && request.cookie == text.cookie && request.nonce == text.nonce
                    && request.appCheck == text.appCheck)
        }
    }

    @Test func theContextExtensionNamesTheProfile() throws {
        let request = try read(Self.checkRequest(http: Self.field(4, "/orders"),
                                                 extensions: Self.field(10, Self.entry("other", "x")) + Self.field(10, Self.entry("idtoken-profile", "corp"))))
        #expect(request.target == "/verify/corp")
        #expect(try read(Self.checkRequest(http: Self.field(4, "orders"))).target == "/verify")
    }

    @Test func headerMapWhenTheMapIsEmpty() throws {
        func header(_ key: String, value: String = "", raw: String = "") -> [UInt8] {
            Self.field(1, Self.field(1, key) + (value.isEmpty ? [] : Self.field(2, value)) + (raw.isEmpty ? [] : Self.field(3, raw)))
        }
        let map = header("Authorization", raw: "Bearer raw.value.here") + header("Cookie", value: "a=1") + header("cookie", raw: "__session=t")
            + header("X-IDToken-Nonce", value: "n-2")
        let request = try read(Self.checkRequest(http: Self.field(13, map)))
        #expect(request.authorization == "Bearer raw.value.here")
        #expect(request.cookie == "a=1; __session=t")
        #expect(request.nonce == "n-2")
        // With entries in the headers map, header_map is not read.
        let both = try read(Self.checkRequest(http: Self.field(3, Self.entry("x-other", "1")) + Self.field(13, map)))
        #expect(both.authorization == nil)
    }

    @Test func refusesBytesThatAreNotAMessage() {
        let valid = Self.checkRequest(http: Self.field(3, Self.entry("authorization", "Bearer a.b.c")))
        #expect(throws: ExternalAuthorization.Malformed.self) { try read([0x0A, 0x05, 0x01]) }              // a length past the end
        #expect(throws: ExternalAuthorization.Malformed.self) { try read([0x0B]) }                          // a group
        #expect(throws: ExternalAuthorization.Malformed.self) { try read([0x02, 0x00]) }                    // field number 0
        #expect(throws: ExternalAuthorization.Malformed.self) { try read([0x08] + Array(repeating: 0xFF, count: 11)) }   // an 11-byte varint
        #expect(throws: ExternalAuthorization.Malformed.self) { try read(Array(valid.dropLast())) }
        // Every prefix of a valid message is read or refused, never read past.
        for end in 0..<valid.count {
            _ = try? read(Array(valid[..<end]))
        }
        #expect(throws: Never.self) { _ = try read([]) }
    }

    @Test func writesTheLengthPrefixOfItsAnswer() {
        var out = ByteBufferAllocator().buffer(capacity: 0)
        var response = ServeResponse(status: 401, headers: [("WWW-Authenticate", "Bearer"), ("X-Auth-Error", "expired")], body: "")
        response.refused = .expired
        door.writeCheckResponse(response, to: &out)
        #expect(out.getInteger(at: 0, as: UInt8.self) == 0)
        #expect(out.getInteger(at: 1, as: UInt32.self).map(Int.init) == out.readableBytes - 5)
        let bytes = out.getBytes(at: 5, length: out.readableBytes - 5) ?? []
        // status (1) { code 16, message "expired" }, then the denied response (2) starting with its HTTP status 401.
        #expect(Array(bytes.prefix(13)) == [0x0A, 0x0B, 0x08, 0x10, 0x12, 0x07] + Array("expired".utf8))
        #expect(Array(bytes[13...]).starts(with: [0x12]))
        #expect(String(decoding: bytes, as: UTF8.self).contains("www-authenticate"))
    }

    /// An allow's identity headers reach the gRPC door as the HTTP door's lines (IdentityAnswer): laid out when the
    /// answer is kept with its token, or by the door for an answer to one request, the same `headers` fields, one a
    /// line, the name lower-case and the value as it is; the identity headers the answer lacks are removed.
    @Test func anAllowsIdentityLinesBecomeTheSameHeaderOptionsKeptOrNot() throws {
        let lines = "X-Auth-Subject: user-1\r\nX-Auth-Issuer: https://securetoken.google.com/p\r\nX-Auth-Provider: firebase\r\n"
            + "X-Auth-Expires: 1767233766\r\nX-Auth-Claims: eyJzdWIiOiJ1c2VyLTEifQ\r\n"
        var answers: [[UInt8]] = []
        for kept in [true, false] {
            let identity = IdentityAnswer(renderer: ObjectIdentifier(ExternalAuthorizationTests.self), profile: "firebase",
                                          http: Array(lines.utf8), expiresAt: 1_767_233_766, laysOutGRPC: kept)
            #expect((identity.grpc != nil) == kept)
            var out = ByteBufferAllocator().buffer(capacity: 0)
            door.writeCheckResponse(ServeResponse(status: 200, identity: identity, headers: [("Cache-Control", "no-store")], body: ""),
                                    to: &out)
            answers.append(out.getBytes(at: 5, length: out.readableBytes - 5) ?? [])
        }
        #expect(answers[0] == answers[1])
        let option = { (name: String, value: String) -> [UInt8] in
            Self.field(2, Self.field(1, Self.field(1, name) + Self.field(2, value)) + [0x18, 0x02])
        }
        for (name, value) in [("x-auth-subject", "user-1"), ("x-auth-issuer", "https://securetoken.google.com/p"),
                              ("x-auth-provider", "firebase"), ("x-auth-expires", "1767233766"),
                              ("x-auth-claims", "eyJzdWIiOiJ1c2VyLTEifQ")] {
            #expect(answers[0].firstRange(of: option(name, value)) != nil, "\(name)")
        }
        // Not sent, so removed upstream (headers_to_remove, 5): the identity headers this answer lacks.
        #expect(answers[0].firstRange(of: Self.field(5, "x-auth-email")) != nil)
        #expect(answers[0].firstRange(of: Self.field(5, "x-auth-subject")) == nil)
        // An allow's other headers are not passed on.
        #expect(String(decoding: answers[0], as: UTF8.self).contains("cache-control") == false)
    }
}
