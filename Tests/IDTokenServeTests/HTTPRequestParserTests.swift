@testable import IDTokenServe
import IDTokenKit
import Testing

/// The request heads the service reads itself: what it keeps from them, and every ambiguity it refuses rather
/// than guess (a proxy in front may have framed the same bytes differently).
struct HTTPRequestParserTests {
    let parser = HTTPRequestParser(limit: 1024, nonceHeader: "X-IDToken-Nonce")

    func parse(_ text: String, parser: HTTPRequestParser? = nil) -> HTTPRequestParser.Result {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { (parser ?? self.parser).parse($0) }
    }

    func head(_ text: String) throws -> HTTPRequestParser.Head {
        guard case .head(let head) = parse(text) else {
            Issue.record("not a complete head: \(parse(text))")
            throw CancellationError()
        }
        return head
    }

    func refusal(_ text: String) -> HTTPRequestParser.Refusal? {
        if case .refused(let refusal) = parse(text) { return refusal }
        return nil
    }

    @Test func keepsWhatTheServiceReads() throws {
        let text = "GET /verify/firebase?x=1 HTTP/1.1\r\nHost: a\r\nauthorization:  Bearer abc.def.ghi \t\r\n"
            + "Cookie: a=1\r\nX-Other: y\r\ncookie: __session=t\r\nx-idtoken-NONCE: n-1\r\n\r\nGET /next"
        let head = try head(text)
        #expect(head.request.target == "/verify/firebase?x=1")
        // The usual form of the header: its token is read from the bytes, and the value is not kept.
        #expect(head.request.bearerToken == "abc.def.ghi")
        #expect(head.request.authorization == nil)
        #expect(head.request.cookie == "a=1; __session=t")
        #expect(head.request.nonce == "n-1")
        #expect(head.length == text.utf8.count - "GET /next".utf8.count)
        #expect(head.keepAlive && !head.isHTTP10 && !head.isHEAD && head.bodyLength == 0 && !head.chunked)
    }

    /// The token the parser takes from the bytes is the one BearerToken finds in the whole value, for every value:
    /// every printable ASCII byte, a tab and non-ASCII text at several places, other schemes, spaces.
    @Test func theBearerTokenReadFromTheBytesIsTheOneBearerTokenFinds() throws {
        var values = ["Bearer abc.def.ghi", "bearer  abc   ", "BEARER x", "Bearer", "Bearer   ", "Bearerabc", "Basic dXNlcjpwYXNz",
                      "Bearer a b", "Bearer a\tb", "Bearer zoë", "Béarer abc", "Bearer é", "Bearer a\u{A0}b", "Bearer\tabc"]
        let token = String(repeating: "eyJhbGciOi.", count: 3)
        for byte in UInt8(0x20)...0x7E {
            for place in [0, 1, 8, 16, token.utf8.count - 1, token.utf8.count] {
                var bytes = Array(token.utf8)
                bytes.insert(byte, at: place)
                values.append("Bearer " + String(decoding: bytes, as: UTF8.self))
            }
        }
        var fromBytes = 0
        for value in values {
            let text = "GET /verify HTTP/1.1\r\nHost: a\r\nAuthorization: \(value)\r\n\r\n"
            let head = try head(text)
            let trimmed = String(value.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            #expect(head.request.hasAuthorization, "\(value.debugDescription)")
            #expect(head.request.authorizationToken == BearerToken.token(inAuthorization: trimmed), "\(value.debugDescription)")
            if head.request.bearerToken != nil {
                fromBytes += 1
                #expect(head.request.authorization == nil)
            } else {
                #expect(head.request.authorization == trimmed, "\(value.debugDescription)")
            }
            // Lending: the same token is left in the bytes, at the range the head gives, and no string is made of it;
            // a value of any other form is kept whole as before.
            let bytes = Array(text.utf8)
            guard case .head(let lent) = bytes.withUnsafeBytes({ parser.parse($0, lendingBearerToken: true) }) else {
                Issue.record("lending: not a complete head for \(value.debugDescription)")
                continue
            }
            #expect(lent.request.bearerToken == nil && lent.request.hasAuthorization, "\(value.debugDescription)")
            #expect(lent.request.lendsBearerToken == (head.request.bearerToken != nil), "\(value.debugDescription)")
            #expect(lent.bearerRange.map { String(decoding: bytes[$0], as: UTF8.self) } == head.request.bearerToken, "\(value.debugDescription)")
            #expect(lent.request.authorization == head.request.authorization, "\(value.debugDescription)")
            #expect(lent.length == head.length && lent.request.target == head.request.target)
        }
        // The usual values (a visible ASCII token after the scheme) were read from the bytes.
        #expect(fromBytes > values.count / 2)
        #expect(try head("GET / HTTP/1.1\r\nHost: a\r\n\r\n").request.hasAuthorization == false)
    }

    @Test func connectionPersistenceFollowsTheVersionAndConnectionOptions() throws {
        #expect(try head("GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, CLOSE\r\n\r\n").keepAlive == false)
        #expect(try head("GET / HTTP/1.0\r\n\r\n").keepAlive == false)
        let http10 = try head("HEAD / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(http10.keepAlive && http10.isHTTP10 && http10.isHEAD)
    }

    @Test func bodiesAreSkippedOrTheConnectionClosed() throws {
        #expect(try head("POST /verify HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\nContent-Length: 12\r\n\r\n").bodyLength == 12)
        let chunked = try head("POST /verify HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
        #expect(chunked.chunked && !chunked.keepAlive)
    }

    @Test func waitsForTheWholeHead() {
        for text in ["", "\r\n", "GET", "GET /verify HTTP/1.1\r", "GET /verify HTTP/1.1\r\nHost: a\r\n", "GET /verify HTTP/1.1\r\nHost: a\r\n\r"] {
            guard case .incomplete = parse(text) else {
                Issue.record("\(text.debugDescription) is not incomplete")
                continue
            }
        }
    }

    @Test func refusesAmbiguousFraming() {
        let bad: [String] = [
            "GET /verify HTTP/1.1\nHost: a\r\n\r\n",                                  // bare LF
            "GET /verify HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",                          // bare CR
            "GET /verify HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",                     // obs-fold
            "GET /verify HTTP/1.1\r\nHost : a\r\n\r\n",                               // space before the colon
            "GET /verify HTTP/1.1\r\nHo(st: a\r\n\r\n",                               // not a token
            "GET /verify HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n",                  // NUL in a value
            "GET /verify HTTP/1.1\r\nHost: a\r\nX: a\u{7F}\r\n\r\n",                  // DEL in a value
            "GET /verify HTTP/1.1\r\n\r\n",                                           // HTTP/1.1 without Host
            "GET /verify HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",                     // two Hosts
            "GET /verify HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "GET /verify HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n",
            "GET /verify HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n",
            "GET /verify HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /verify HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /verify HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            "GET /verify HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n",
            "GET /verify HTTP/1.1\r\nHost: a\r\nX-IDToken-Nonce: a\r\nx-idtoken-nonce: b\r\n\r\n",
            "GET  /verify HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /ver ify HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /verify\r\nHost: a\r\n\r\n",
            "GET /verify http/1.1\r\nHost: a\r\n\r\n",
            "G(T /verify HTTP/1.1\r\nHost: a\r\n\r\n",
        ]
        for text in bad {
            guard case .badRequest = refusal(text) else {
                Issue.record("\(text.debugDescription) was not refused 400: \(parse(text))")
                continue
            }
        }
        #expect(refusal("GET /verify HTTP/2.0\r\nHost: a\r\n\r\n") == .versionNotSupported)
        #expect(refusal("GET /verify HTTP/1.2\r\nHost: a\r\n\r\n") == .versionNotSupported)
    }

    @Test func boundsTheHeadAndTheBody() {
        let small = HTTPRequestParser(limit: 64, nonceHeader: "X-Nonce")
        #expect(refusal(for: "GET /verify HTTP/1.1\r\nHost: a\r\nX-Pad: " + String(repeating: "p", count: 60), small) == .headTooLarge)
        #expect(refusal(for: "GET /verify HTTP/1.1\r\nHost: a\r\nX-Pad: " + String(repeating: "p", count: 40) + "\r\n\r\n", small) == .headTooLarge)
        #expect(refusal(for: "POST /verify HTTP/1.1\r\nHost: a\r\nContent-Length: 30\r\n\r\n", small) == .bodyTooLarge)
        guard case .head = parse("POST /verify HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", parser: small) else {
            Issue.record("a body within the limit was refused")
            return
        }
    }

    func refusal(for text: String, _ parser: HTTPRequestParser) -> HTTPRequestParser.Refusal? {
        if case .refused(let refusal) = parse(text, parser: parser) { return refusal }
        return nil
    }

    @Test("a tchar is what RFC 9110 §5.6.2 lists, for every byte value")
    func tokenCharacters() {
        let listed = Set(Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&'*+-.^_`|~".utf8))
        for byte in 0...255 {
            #expect(HeaderBytes.isTokenCharacter(UInt8(byte)) == listed.contains(UInt8(byte)), "byte \(byte)")
        }
    }
}
