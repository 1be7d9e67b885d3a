import IDTokenKit
import JOSE

/// The request heads `idtoken serve` accepts, read straight from the bytes a connection received (RFC 9112).
///
/// The service answers one question per request from four header fields, and never reads a body, so it does not
/// decode a request into a general header collection: it checks the framing strictly, keeps the values it needs,
/// and refuses anything ambiguous rather than guess (a proxy in front might have read it differently):
/// - lines end in CRLF (a bare LF or CR is refused); a header line that starts with a space or tab (obs-fold),
///   a space before the colon, a control character in a value, a field name that is not a token: 400;
/// - `HTTP/1.1` and `HTTP/1.0` only (another `HTTP/x.y` is 505); an HTTP/1.1 request has exactly one `Host`;
/// - `Content-Length` is digits; several must agree; together with `Transfer-Encoding` it is refused (400), as
///   is `Transfer-Encoding` in HTTP/1.0; a body with `Content-Length` is skipped, a chunked one is not read at
///   all: the request is answered and the connection closed;
/// - two `Authorization` fields, or two of the nonce header or of the App Check header, are refused (which token
///   would be meant?);
///   `Cookie` fields are joined with `; ` (RFC 9110 §5.3).
/// The head (request line, fields, the empty line) and any body it declares must fit in `limit` bytes.
struct HTTPRequestParser: Sendable {
    /// Why a head is refused; each is answered with its status and the connection closed.
    enum Refusal: Equatable {
        case badRequest(String)
        case headTooLarge
        case bodyTooLarge
        case versionNotSupported

        var status: Int {
            switch self {
            case .badRequest: 400
            case .headTooLarge: 431
            case .bodyTooLarge: 413
            case .versionNotSupported: 505
            }
        }
    }

    /// A complete request head.
    struct Head {
        var request: ServeRequest
        /// Bytes of the head, the final empty line included.
        var length: Int
        /// Body bytes to skip after the head (`Content-Length`).
        var bodyLength: Int
        /// The body is chunked: answer, then close (it is never read).
        var chunked: Bool
        var keepAlive: Bool
        var isHTTP10: Bool
        var isHEAD: Bool
        /// Where the `Authorization: Bearer` token is in the bytes parsed, when the parser was asked to lend it
        /// (``parse(_:lendingBearerToken:)``): then `request` has ``ServeRequest/lendsBearerToken`` set and no
        /// string of it.
        var bearerRange: Range<Int>? = nil
    }

    enum Result {
        /// More bytes are needed (and the limit is not reached).
        case incomplete
        case head(Head)
        case refused(Refusal)
    }

    /// The most bytes of a head and its body.
    let limit: Int
    /// The nonce header's name, lower-cased.
    let nonceName: [UInt8]
    /// The App Check header's name, lower-cased; empty when the service reads none.
    let appCheckName: [UInt8]

    init(limit: Int, nonceHeader: String, appCheckHeader: String? = nil) {
        self.limit = limit
        self.nonceName = Array(nonceHeader.lowercased().utf8)
        self.appCheckName = Array((appCheckHeader ?? "").lowercased().utf8)
    }

    /// Reads the head at the start of `bytes`.
    /// - Parameter lendingBearerToken: leave a token of the usual form (a visible ASCII token after `Bearer`) in
    ///   the bytes, at ``Head/bearerRange``, for a caller that decides the request while it holds them: no string
    ///   is made of it. Otherwise the head's request holds it as ``ServeRequest/bearerToken``.
    func parse(_ bytes: UnsafeRawBufferPointer, lendingBearerToken: Bool = false) -> Result {
        let count = bytes.count
        var index = 0
        // RFC 9112 §2.2: empty lines before a request line are ignored.
        while index + 1 < count && bytes[index] == cr && bytes[index + 1] == lf { index += 2 }

        // The request line.
        let lineEnd: Int
        switch Self.lineEnd(bytes, from: index) {
        case .incomplete: return incomplete(bytes)
        case .bare: return .refused(.badRequest("a line does not end in CRLF"))
        case .end(let end, _, _): lineEnd = end
        }
        let method = index
        while index < lineEnd && Self.isToken(bytes[index]) { index += 1 }
        guard index > method, index < lineEnd, bytes[index] == space else { return .refused(.badRequest("malformed request line")) }
        let methodEnd = index
        index += 1
        let target = index
        while index < lineEnd && bytes[index] > space && bytes[index] < 0x7F { index += 1 }
        guard index > target, index < lineEnd, bytes[index] == space else { return .refused(.badRequest("malformed request target")) }
        let targetEnd = index
        index += 1
        guard lineEnd - index == 8, Self.matches(bytes, index, "HTTP/1.") else {
            if lineEnd - index == 8, Self.matches(bytes, index, "HTTP/"), Self.isDigit(bytes[index + 5]),
               bytes[index + 6] == UInt8(ascii: "."), Self.isDigit(bytes[index + 7]) {
                return .refused(.versionNotSupported)
            }
            return .refused(.badRequest("malformed HTTP version"))
        }
        let minor = bytes[index + 7]
        guard minor == UInt8(ascii: "1") || minor == UInt8(ascii: "0") else { return .refused(.versionNotSupported) }
        let isHTTP10 = minor == UInt8(ascii: "0")
        index = lineEnd + 2

        var authorization: Range<Int>?
        var authorizationPrintable = false
        var nonce: Range<Int>?
        var appCheck: Range<Int>?
        var cookies: [Range<Int>] = []
        var contentLength: Int?
        var transferEncoding = false
        var chunked = false
        var close = false
        var keepAliveToken = false
        var hosts = 0
        // The fields, up to the empty line.
        while true {
            let end: Int
            let lineIsPrintable: Bool
            switch Self.lineEnd(bytes, from: index) {
            case .incomplete: return incomplete(bytes)
            case .bare: return .refused(.badRequest("a line does not end in CRLF"))
            case .end(_, control: true, _): return .refused(.badRequest("a control character in a header field"))
            case .end(let at, control: false, let printable):
                end = at
                lineIsPrintable = printable
            }
            if end == index { index += 2; break }
            let name = index
            while index < end && Self.isToken(bytes[index]) { index += 1 }
            guard index > name, index < end, bytes[index] == colon else {
                return .refused(.badRequest(name < end && HTTPWhitespace.isOptional(bytes[name])
                                            ? "folded header lines are not accepted" : "malformed header field"))
            }
            let nameEnd = index
            let value = HTTPWhitespace.trimming(index + 1..<end, of: bytes)
            switch nameEnd - name {
            case 4 where Self.named(bytes, name, "host"):
                hosts += 1
            case 6 where Self.named(bytes, name, "cookie"):
                cookies.append(value)
            case 10 where Self.named(bytes, name, "connection"):
                Self.connectionOptions(bytes, value, close: &close, keepAlive: &keepAliveToken)
            case 13 where Self.named(bytes, name, "authorization"):
                guard authorization == nil else { return .refused(.badRequest("more than one Authorization header")) }
                authorization = value
                authorizationPrintable = lineIsPrintable
            case 14 where Self.named(bytes, name, "content-length"):
                guard let length = Self.decimal(bytes, value), contentLength == nil || contentLength == length else {
                    return .refused(.badRequest("an invalid or conflicting Content-Length"))
                }
                contentLength = length
            case 17 where Self.named(bytes, name, "transfer-encoding"):
                transferEncoding = true
                chunked = Self.endsWithChunked(bytes, value)
            default:
                if nameEnd - name == nonceName.count && Self.named(bytes, name, nonceName) {
                    guard nonce == nil else { return .refused(.badRequest("more than one nonce header")) }
                    nonce = value
                } else if !appCheckName.isEmpty && nameEnd - name == appCheckName.count && Self.named(bytes, name, appCheckName) {
                    guard appCheck == nil else { return .refused(.badRequest("more than one App Check header")) }
                    appCheck = value
                }
            }
            index = end + 2
        }
        if index > limit { return .refused(.headTooLarge) }
        if transferEncoding && (contentLength != nil || isHTTP10) {
            return .refused(.badRequest("Transfer-Encoding with Content-Length, or in HTTP/1.0"))
        }
        // RFC 9112 §6.3: a Transfer-Encoding whose final coding is not chunked leaves the length unknown.
        if transferEncoding && !chunked { return .refused(.badRequest("a Transfer-Encoding other than chunked")) }
        if !isHTTP10 && hosts != 1 { return .refused(.badRequest(hosts == 0 ? "an HTTP/1.1 request without Host" : "more than one Host header")) }
        let bodyLength = contentLength ?? 0
        if bodyLength > limit - index { return .refused(.bodyTooLarge) }

        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
        var cookie: String?
        if !cookies.isEmpty { cookie = cookies.map(text).joined(separator: "; ") }
        // A `Bearer` token of visible ASCII, as every client sends it, is taken from the bytes: one string, the token's.
        // Any other value is kept whole for BearerToken to decide on.
        var bearerToken: String?, authorizationValue: String?, bearerRange: Range<Int>?
        if let authorization {
            if let range = BearerToken.visibleToken(inAuthorization: authorization, of: bytes, printable: authorizationPrintable) {
                if lendingBearerToken { bearerRange = range } else { bearerToken = text(range) }
            } else {
                authorizationValue = text(authorization)
            }
        }
        let isHEAD = methodEnd - method == 4 && Self.matches(bytes, method, "HEAD")
        // The request made in place in the head (a request made first is copied into it: a retain and a release of
        // each of its strings).
        var request = ServeRequest(target: text(target..<targetEnd), authorization: authorizationValue,
                                   bearerToken: bearerToken, cookie: cookie, nonce: nonce.map(text), appCheck: appCheck.map(text))
        request.lendsBearerToken = bearerRange != nil
        return .head(Head(request: request, length: index, bodyLength: bodyLength, chunked: chunked,
                          keepAlive: !close && !chunked && (!isHTTP10 || keepAliveToken), isHTTP10: isHTTP10, isHEAD: isHEAD,
                          bearerRange: bearerRange))
    }

    private func incomplete(_ bytes: UnsafeRawBufferPointer) -> Result {
        bytes.count > limit ? .refused(.headTooLarge) : .incomplete
    }

    // MARK: Bytes

    private var cr: UInt8 { 13 }
    private var lf: UInt8 { 10 }
    private var space: UInt8 { 32 }
    private var colon: UInt8 { 58 }

    /// Where the line starting at `start` ends.
    enum LineEnd {
        /// Not complete yet.
        case incomplete
        /// A CR or LF stands alone in it.
        case bare
        /// The index of the CR of its CRLF; `control`: whether the line holds a control character other than
        /// TAB, or DEL; `printable`: whether every byte before the CR is printable ASCII (0x20 to 0x7E).
        case end(Int, control: Bool, printable: Bool)
    }

    /// Finds the end of the line at `start`, eight bytes at a time while none of them is a control character or
    /// DEL (a token and a field value rarely hold one), byte by byte around those that are.
    static func lineEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> LineEnd {
        let count = bytes.count
        // Sixteen bytes a vector compare to the first byte that is not printable ASCII (most lines, a token above
        // all, have none before their CR); from there eight bytes and then one at a time.
        var index = ByteSearch.firstIndex(outside: 0x20, 0x7E, in: bytes, from: start)
        let firstUnprintable = index
        var control = false
        while index < count {
            if index + 8 <= count {
                if !HeaderBytes.mayHoldControl(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                    index += 8
                    continue
                }
            }
            let stop = min(index + 8, count)
            while index < stop {
                let byte = bytes[index]
                if byte == 13 {
                    guard index + 1 < count else { return .incomplete }
                    return bytes[index + 1] == 10 ? .end(index, control: control, printable: index == firstUnprintable) : .bare
                }
                if byte == 10 { return .bare }
                if (byte < 32 && byte != 9) || byte == 0x7F { control = true }
                index += 1
            }
        }
        return .incomplete
    }

    @inline(__always)
    private static func isToken(_ byte: UInt8) -> Bool { HeaderBytes.isTokenCharacter(byte) }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    /// Whether the bytes at `start` are `literal`, exactly.
    private static func matches(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard start + count <= bytes.count else { return false }
        let pointer = literal.utf8Start
        for i in 0..<count where bytes[start + i] != pointer[i] { return false }
        return true
    }

    /// Whether the field name at `start` is `lower` (ASCII, lower-case), ignoring case; the length is checked by
    /// the caller.
    private static func named(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ lower: StaticString) -> Bool {
        let pointer = lower.utf8Start
        for i in 0..<lower.utf8CodeUnitCount where lowercased(bytes[start + i]) != pointer[i] { return false }
        return true
    }

    private static func named(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ lower: [UInt8]) -> Bool {
        for i in 0..<lower.count where lowercased(bytes[start + i]) != lower[i] { return false }
        return true
    }

    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte | 0x20 : byte }

    /// A `Content-Length` value: 1 to 15 digits, nothing else.
    private static func decimal(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.count <= 15 else { return nil }
        var value = 0
        for i in range {
            guard isDigit(bytes[i]) else { return nil }
            value = value * 10 + Int(bytes[i] - 48)
        }
        return value
    }

    /// The `close` and `keep-alive` options of a `Connection` value (a comma-separated list, any case).
    private static func connectionOptions(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, close: inout Bool, keepAlive: inout Bool) {
        var start = range.lowerBound
        while start < range.upperBound {
            var end = start
            while end < range.upperBound && bytes[end] != UInt8(ascii: ",") { end += 1 }
            var a = start, b = end
            while a < b && (bytes[a] == 32 || bytes[a] == 9) { a += 1 }
            while b > a && (bytes[b - 1] == 32 || bytes[b - 1] == 9) { b -= 1 }
            if b - a == 5 && named(bytes, a, "close") { close = true }
            if b - a == 10 && named(bytes, a, "keep-alive") { keepAlive = true }
            start = end + 1
        }
    }

    /// Whether a `Transfer-Encoding` value's last coding is `chunked`.
    private static func endsWithChunked(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        var end = range.upperBound
        while end > range.lowerBound && (bytes[end - 1] == 32 || bytes[end - 1] == 9) { end -= 1 }
        var start = end
        while start > range.lowerBound && bytes[start - 1] != UInt8(ascii: ",") { start -= 1 }
        while start < end && (bytes[start] == 32 || bytes[start] == 9) { start += 1 }
        return end - start == 7 && named(bytes, start, "chunked")
    }
}
