import FuzzDriver
import IDTokenKit
@testable import IDTokenServe  // the parser is internal to the service; -enable-testing builds reach it

// `idtoken serve`'s request-head parser (HTTPRequestParser) on hostile bytes: what a client, or a proxy that
// framed a request differently, can send before the service judges a token.
//
// The first input byte picks the limit (maxHeaderBytes: 64 to 16,384 bytes); the rest is what the connection
// received. Checks, besides "never crash":
// - a complete head is within the limit and the input, ends in CRLF CRLF, and holds no CR or LF that is not part
//   of a CRLF;
// - the same bytes arriving in pieces give the same answer: every strict prefix of a complete head is incomplete,
//   and the head alone (without what follows it) is the same head;
// - lending the bearer token (as the connection parses) leaves the token read as text in the bytes, and nothing else
//   differs;
// - what the head hands on holds no control character: the target no byte at or below the space or DEL, the
//   Authorization and nonce values no CR, LF or NUL and no space or tab at either end;
// - a body it declares fits the limit with the head;
// - input still incomplete is within the limit (past it, the answer is 431, never "wait for more").

let limits = [64, 256, 1024, 16_384]

func parse(_ bytes: [UInt8], _ parser: HTTPRequestParser) -> HTTPRequestParser.Result {
    bytes.withUnsafeBytes { parser.parse($0) }
}

func checkValue(_ value: String?, _ name: String) {
    guard let value else { return }
    let utf8 = Array(value.utf8)
    if utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) { Fuzz.fail("\(name) holds CR, LF or NUL: \(Fuzz.show(utf8))") }
    if let first = utf8.first, first == 32 || first == 9 { Fuzz.fail("\(name) starts with whitespace: \(Fuzz.show(utf8))") }
    if let last = utf8.last, last == 32 || last == 9 { Fuzz.fail("\(name) ends with whitespace: \(Fuzz.show(utf8))") }
}

func sameHead(_ a: HTTPRequestParser.Head, _ b: HTTPRequestParser.Head) -> Bool {
    a.length == b.length && a.bodyLength == b.bodyLength && a.chunked == b.chunked && a.keepAlive == b.keepAlive
        && a.isHTTP10 == b.isHTTP10 && a.isHEAD == b.isHEAD && a.request.target == b.request.target
        && a.request.authorization == b.request.authorization && a.request.bearerToken == b.request.bearerToken
        && a.request.cookie == b.request.cookie
        && a.request.nonce == b.request.nonce
}

Fuzz.run { data in
    guard let mode = data.first else { return }
    let limit = limits[Int(mode & 3)]
    let parser = HTTPRequestParser(limit: limit, nonceHeader: "X-IDToken-Nonce")
    let bytes = Array(data.dropFirst())
    switch parse(bytes, parser) {
    case .incomplete:
        if bytes.count > limit { Fuzz.fail("incomplete past the limit (\(bytes.count) > \(limit)): \(Fuzz.show(bytes))") }
    case .refused:
        break
    case .head(let head):
        let length = head.length
        guard length >= 4, length <= bytes.count, length <= limit else {
            Fuzz.fail("head length \(length) outside the input (\(bytes.count)) or the limit (\(limit))")
        }
        guard bytes[(length - 4)..<length].elementsEqual([13, 10, 13, 10]) else { Fuzz.fail("head does not end in CRLF CRLF: \(Fuzz.show(bytes[..<length]))") }
        for i in 0..<length {
            if bytes[i] == 10 && (i == 0 || bytes[i - 1] != 13) { Fuzz.fail("bare LF at \(i): \(Fuzz.show(bytes[..<length]))") }
            if bytes[i] == 13 && (i + 1 >= length || bytes[i + 1] != 10) { Fuzz.fail("bare CR at \(i): \(Fuzz.show(bytes[..<length]))") }
        }
        if head.bodyLength > limit - length { Fuzz.fail("a body of \(head.bodyLength) bytes past the limit with a \(length)-byte head") }
        if head.chunked && head.keepAlive { Fuzz.fail("a chunked body on a connection kept alive") }
        if head.request.target.utf8.contains(where: { $0 <= 32 || $0 == 0x7F }) { Fuzz.fail("target holds a space or control: \(head.request.target)") }
        checkValue(head.request.authorization, "Authorization")
        checkValue(head.request.bearerToken, "the bearer token")
        // The token read from the bytes is the one BearerToken finds in the whole value, and only such a token is.
        if let token = head.request.bearerToken {
            if head.request.authorization != nil { Fuzz.fail("both the Authorization value and its token kept") }
            if token.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) { Fuzz.fail("a bearer token with a space or a byte outside visible ASCII: \(Fuzz.show(Array(token.utf8)))") }
        } else if let value = head.request.authorization, let token = BearerToken.token(inAuthorization: value),
                  token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            Fuzz.fail("a visible ASCII bearer token left in the Authorization value: \(Fuzz.show(Array(value.utf8)))")
        }
        checkValue(head.request.nonce, "nonce")
        // Lending the bearer token (as the connection parses): the same head, the token left in the bytes where the
        // plain reading found it.
        guard case .head(let lent) = bytes.withUnsafeBytes({ parser.parse($0, lendingBearerToken: true) }) else {
            Fuzz.fail("the head reads differently when its bearer token is lent: \(Fuzz.show(bytes[..<length]))")
        }
        var plain = lent.request
        plain.bearerToken = lent.bearerRange.map { String(decoding: bytes[$0], as: UTF8.self) }
        plain.lendsBearerToken = false
        if lent.request.bearerToken != nil || lent.request.lendsBearerToken != (lent.bearerRange != nil)
            || !sameHead(HTTPRequestParser.Head(request: plain, length: lent.length, bodyLength: lent.bodyLength, chunked: lent.chunked,
                                                keepAlive: lent.keepAlive, isHTTP10: lent.isHTTP10, isHEAD: lent.isHEAD), head) {
            Fuzz.fail("the lent bearer token is not the one read as text: \(Fuzz.show(bytes[..<length]))")
        }
        // The head alone is the same head.
        guard case .head(let alone) = parse(Array(bytes[..<length]), parser), sameHead(alone, head) else {
            Fuzz.fail("the head alone reads differently: \(Fuzz.show(bytes[..<length]))")
        }
        // Arriving in pieces: three strict prefixes, spread over the head, are incomplete.
        for cut in Set([length - 1, length / 2, Int(mode >> 2) % length]) where cut < length {
            guard case .incomplete = parse(Array(bytes[..<cut]), parser) else {
                Fuzz.fail("the first \(cut) of a \(length)-byte head are not incomplete: \(Fuzz.show(bytes[..<length]))")
            }
        }
    }
}
