import FuzzDriver
@testable import IDTokenServe  // ServeSettings and ExternalAuthorization are package API; -enable-testing builds reach them
import NIOCore

// The gRPC door's reading of Envoy's `CheckRequest` (ExternalAuthorization) on hostile protobuf bytes: what any
// peer that reaches `--grpc-listen` can send as a message. Checks, besides "never crash" and "never read past the
// message":
// - what it hands on is a `/verify` target, and header values are strings of the message's own bytes;
// - fields it does not read change nothing: the same message with an unknown field of each wire type appended (at
//   the top level, where a reader skips it) reads the same;
// - a message and the message split in two length-delimited copies of `attributes` (protobuf's merge of a repeated
//   singular message) agree on what both hold;
// - read lending its bearer token (the gRPC door's way), it says the same: the lent bytes are the token BearerToken finds
//   in the `authorization` value read as text, and nothing else differs;
// - the answer it writes for what it read is one length-prefixed message whose prefix is its length.

let door: ExternalAuthorization = {
    var settings = ServeSettings()
    settings.appCheckProfile = "app-check"
    return ExternalAuthorization(settings: settings)
}()

func read(_ bytes: [UInt8]) -> ServeRequest? {
    bytes.withUnsafeBytes { try? door.request(fromMessage: $0) }
}

func same(_ a: ServeRequest, _ b: ServeRequest) -> Bool {
    a.target == b.target && a.authorization == b.authorization && a.cookie == b.cookie && a.nonce == b.nonce
        && a.appCheck == b.appCheck
}

Fuzz.run { data in
    let bytes = Array(data)
    guard let request = read(bytes) else { return }
    if !request.target.hasPrefix("/verify") { Fuzz.fail("a target outside /verify: \(request.target)") }
    let total = bytes.count
    for value in [request.authorization, request.cookie, request.nonce, request.appCheck].compactMap({ $0 }) {
        // A value is read from the message (joined values of header_map add at most `; ` between parts).
        if value.utf8.count > 3 * total + 2 { Fuzz.fail("a header value longer than the message could hold: \(value.utf8.count) > \(total)") }
    }
    // Unknown fields of every wire type, appended: field 15 varint, 16 fixed64, 17 length-delimited, 18 fixed32.
    let unknown: [UInt8] = [0x78, 0x96, 0x01, 0x81, 0x01] + [UInt8](repeating: 7, count: 8) + [0x8A, 0x01, 0x02, 0x41, 0x42]
        + [0x95, 0x01, 1, 2, 3, 4]
    guard let extended = read(bytes + unknown), same(extended, request) else {
        Fuzz.fail("unknown fields changed the reading: \(Fuzz.show(bytes))")
    }
    // Read lending its bearer token: the same request, the token in the bytes.
    let lending = bytes.withUnsafeBytes { bytes -> (ServeRequest, String?)? in
        guard let (request, range) = try? door.request(fromMessage: bytes, lendingBearerToken: true) else { return nil }
        return (request, range.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) })
    }
    guard let (lent, token) = lending else { Fuzz.fail("read as text but refused lending: \(Fuzz.show(bytes))") }
    if let token {
        if lent.authorization != nil || !lent.lendsBearerToken || token != request.authorizationToken {
            Fuzz.fail("a lent token that is not the one read as text (\(token)): \(Fuzz.show(bytes))")
        }
        var asText = lent
        asText.authorization = request.authorization
        asText.lendsBearerToken = false
        if !same(asText, request) { Fuzz.fail("lending changed the rest of the reading: \(Fuzz.show(bytes))") }
    } else if lent.lendsBearerToken || !same(lent, request) {
        Fuzz.fail("read differently lending and not lending no token: \(Fuzz.show(bytes))")
    }
    // The answer to what it read: one message, its prefix its length.
    var out = ByteBufferAllocator().buffer(capacity: 0)
    var response = ServeResponse(status: request.authorization == nil ? 401 : 200,
                                 headers: [("X-Auth-Subject", request.authorization ?? ""), ("WWW-Authenticate", "Bearer")],
                                 body: request.cookie ?? "")
    response.refused = request.authorization == nil ? nil : .expired
    door.writeCheckResponse(response, to: &out)
    guard out.readableBytes >= 5, out.getInteger(at: 0, as: UInt8.self) == 0,
          out.getInteger(at: 1, as: UInt32.self).map(Int.init) == out.readableBytes - 5 else {
        Fuzz.fail("an answer whose prefix is not its length (\(out.readableBytes) bytes)")
    }
}
