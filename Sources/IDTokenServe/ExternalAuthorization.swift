import IDTokenKit
import JOSE
import NIOCore

/// Envoy's `envoy.service.auth.v3.Authorization/Check` (`ext_authz` over gRPC) as bytes: the few fields of a
/// `CheckRequest` the service reads, and the `CheckResponse` its answer becomes (docs/serve.md, "Envoy over gRPC").
/// The messages are those of `Protos/` (field numbers and types as Envoy's data-plane-api defines them); they are
/// read and written here in the protobuf wire format directly, so that a call costs what its answer costs: no message
/// tree, no map of every header Envoy forwards, no generic RPC machinery.
///
/// Read: `attributes.request.http.headers` (the lower-case names Envoy sends; for a repeated key the last entry, as
/// protobuf map semantics say), or, when that map is empty, `attributes.request.http.header_map` (Envoy's
/// `encode_raw_headers`: names compared without case, several values of one name joined as Envoy joins them, `; ` for
/// cookies and `,` otherwise, `raw_value` when `value` is empty); `attributes.request.http.path`; the
/// `idtoken-profile` entry of `attributes.context_extensions`. Every other field is skipped by its wire type.
///
/// Written: status OK with `ok_response` (the identity headers, lower-case, overwriting; `headers_to_remove`: every
/// identity header the answer does not carry, so that a client's own `x-auth-email` never reaches the upstream, and
/// `authorization` when `serve.grpcRemoveAuthorization` says so); or UNAUTHENTICATED, PERMISSION_DENIED or
/// UNAVAILABLE with the verdict's code as the message and a `denied_response` carrying the HTTP door's status, headers
/// (`www-authenticate`, `x-auth-error`, `retry-after`) and body, which Envoy sends to the client.
package struct ExternalAuthorization: Sendable {
    /// The gRPC method's path.
    package static let checkMethod = "/envoy.service.auth.v3.Authorization/Check"
    static let checkMethodBytes = Array(checkMethod.utf8)
    /// The context extension (set per route in Envoy's `ext_authz` per-route configuration) that names a profile.
    package static let profileExtension = "idtoken-profile"
    /// The identity headers an allow answer can carry: those it does not carry are removed upstream.
    static let identityHeaders = ["x-auth-subject", "x-auth-issuer", "x-auth-provider", "x-auth-profile",
                                  "x-auth-audience", "x-auth-expires", "x-auth-email", "x-auth-claims",
                                  "x-auth-claims-omitted", "x-auth-app-id"]

    /// The lower-case names of the request headers the service reads, in ``Wanted`` order.
    private let wanted: [[UInt8]]
    private let removesAuthorization: Bool

    package init(settings: ServeSettings) {
        wanted = [Array("authorization".utf8), Array("cookie".utf8), Array(settings.nonceHeader.lowercased().utf8),
                  settings.appCheckProfile == nil ? [] : Array(settings.appCheckHeader.lowercased().utf8)]
        removesAuthorization = settings.grpcRemovesAuthorization
    }

    /// Why a message is not a `CheckRequest`.
    package struct Malformed: Error, Equatable {
        package let reason: String
    }

    // MARK: Reading a CheckRequest

    /// The headers the service reads, by their index in `wanted`.
    private struct Found {
        var values: (String?, String?, String?, String?) = (nil, nil, nil, nil)
        subscript(index: Int) -> String? {
            get {
                switch index {
                case 0: values.0
                case 1: values.1
                case 2: values.2
                default: values.3
                }
            }
            set {
                switch index {
                case 0: values.0 = newValue
                case 1: values.1 = newValue
                case 2: values.2 = newValue
                default: values.3 = newValue
                }
            }
        }
    }

    private struct Reading {
        /// Whether the bearer token of the `headers` map's `authorization` entry is to be lent (see
        /// ``request(fromMessage:lendingBearerToken:)``) rather than made a string.
        let lending: Bool
        var path: String = ""
        var profile: String?
        /// From the `headers` map, and how many entries it had.
        var map = Found()
        var mapEntries = 0
        /// Where the `headers` map's `authorization` entry holds a bearer token of the usual form, when lent (then
        /// `map` has no `authorization` value).
        var mapBearer: Range<Int>?
        /// From the `header_map` list.
        var list = Found()
    }

    /// The ``ServeRequest`` a serialized `CheckRequest` asks about: the target `/verify/<profile>` when the route's
    /// context extension names a profile, else `/verify` followed by the original path (whose first segment picks a
    /// profile as over HTTP), else `/verify` (the token's issuer routes).
    /// - Throws: ``Malformed`` for bytes that are not a protobuf message (a length past the end, a varint of more
    ///   than ten bytes, field number 0, a group or an unknown wire type).
    package func request(fromMessage bytes: UnsafeRawBufferPointer) throws(Malformed) -> ServeRequest {
        try request(fromMessage: bytes, lendingBearerToken: false).request
    }

    /// The same, the bearer token left in the bytes when `lendingBearerToken` and the `headers` map's `authorization`
    /// entry is `Bearer` and a token of visible ASCII (`BearerToken.visibleToken(inAuthorization:of:printable:)`): then
    /// `request` has ``ServeRequest/lendsBearerToken`` set and no `authorization`, and `bearerRange` is where the token
    /// is in `bytes`, for a caller that decides the request while it holds them (as the HTTP door lends its own).
    /// Any other value, and a `header_map` list (whose repeated entries are joined), are read as strings as before.
    package func request(fromMessage bytes: UnsafeRawBufferPointer,
                         lendingBearerToken: Bool) throws(Malformed) -> (request: ServeRequest, bearerRange: Range<Int>?) {
        var reading = Reading(lending: lendingBearerToken)
        try fields(of: bytes, 0..<bytes.count) { (number, value) throws(Malformed) in
            if number == 1, case .bytes(let attributes) = value { try self.attributes(bytes, attributes, into: &reading) }
        }
        let found = reading.mapEntries > 0 ? reading.map : reading.list
        let bearerRange = reading.mapEntries > 0 ? reading.mapBearer : nil
        var target = "/verify"
        if let profile = reading.profile, !profile.isEmpty {
            target += "/" + profile
        } else if reading.path.utf8.first == UInt8(ascii: "/") {
            target += reading.path
        }
        var request = ServeRequest(target: target, authorization: found[0], cookie: found[1], nonce: found[2],
                                   appCheck: wanted[3].isEmpty ? nil : found[3])
        request.lendsBearerToken = bearerRange != nil
        return (request, bearerRange)
    }

    /// `AttributeContext`: `request` (4), `context_extensions` (10).
    private func attributes(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, into reading: inout Reading) throws(Malformed) {
        try fields(of: bytes, range) { (number, value) throws(Malformed) in
            guard case .bytes(let inner) = value else { return }
            switch number {
            case 4:
                // `Request`: `http` (2).
                try fields(of: bytes, inner) { (number, value) throws(Malformed) in
                    if number == 2, case .bytes(let http) = value { try self.http(bytes, http, into: &reading) }
                }
            case 10:
                let (key, entry) = try mapEntry(bytes, inner)
                if Self.equal(bytes, key, Self.profileExtensionBytes) { reading.profile = Self.string(bytes, entry) }
            default:
                break
            }
        }
    }

    /// `HttpRequest`: `headers` (3), `path` (4), `header_map` (13).
    private func http(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, into reading: inout Reading) throws(Malformed) {
        try fields(of: bytes, range) { (number, value) throws(Malformed) in
            guard case .bytes(let inner) = value else { return }
            switch number {
            case 3:
                reading.mapEntries += 1
                let (key, entry) = try mapEntry(bytes, inner)
                guard let index = wantedIndex(bytes, key, ignoringCase: false) else { return }
                // The last entry of a key wins, whichever way it is read.
                if index == 0 && reading.lending, let token = BearerToken.visibleToken(inAuthorization: entry, of: bytes, printable: false) {
                    reading.map[0] = nil
                    reading.mapBearer = token
                    return
                }
                if index == 0 { reading.mapBearer = nil }
                reading.map[index] = Self.string(bytes, entry)
            case 4:
                reading.path = Self.string(bytes, inner)
            case 13:
                // `HeaderMap`: `headers` (1), each a `HeaderValue`: `key` (1), `value` (2), `raw_value` (3).
                try fields(of: bytes, inner) { (number, value) throws(Malformed) in
                    guard number == 1, case .bytes(let header) = value else { return }
                    var key = 0..<0, text = 0..<0, raw = 0..<0
                    try fields(of: bytes, header) { (number, value) throws(Malformed) in
                        guard case .bytes(let field) = value else { return }
                        switch number {
                        case 1: key = field
                        case 2: text = field
                        case 3: raw = field
                        default: break
                        }
                    }
                    guard let index = wantedIndex(bytes, key, ignoringCase: true) else { return }
                    let value = Self.string(bytes, text.isEmpty ? raw : text)
                    if let earlier = reading.list[index] {
                        reading.list[index] = earlier + (index == 1 ? "; " : ",") + value
                    } else {
                        reading.list[index] = value
                    }
                }
            default:
                break
            }
        }
    }

    /// A map entry's key (1) and value (2); absent ones are empty.
    private func mapEntry(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws(Malformed) -> (Range<Int>, Range<Int>) {
        var key = range.lowerBound..<range.lowerBound, value = key
        try fields(of: bytes, range) { (number, field) throws(Malformed) in
            guard case .bytes(let inner) = field else { return }
            if number == 1 { key = inner } else if number == 2 { value = inner }
        }
        return (key, value)
    }

    private func wantedIndex(_ bytes: UnsafeRawBufferPointer, _ key: Range<Int>, ignoringCase: Bool) -> Int? {
        for index in wanted.indices where !wanted[index].isEmpty && wanted[index].count == key.count {
            let name = wanted[index]
            var same = true
            for offset in 0..<name.count {
                var byte = bytes[key.lowerBound + offset]
                if ignoringCase && byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
                if byte != name[offset] { same = false; break }
            }
            if same { return index }
        }
        return nil
    }

    private static let profileExtensionBytes = Array(profileExtension.utf8)

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ other: [UInt8]) -> Bool {
        range.count == other.count && bytes[range].elementsEqual(other)
    }

    private static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// A field's value: a varint, fixed-width bytes skipped, or a length-delimited range.
    private enum Value {
        case scalar
        case bytes(Range<Int>)
    }

    /// Calls `body` with each field of the message in `range`, in order.
    private func fields(of bytes: UnsafeRawBufferPointer, _ range: Range<Int>,
                        _ body: (Int, Value) throws(Malformed) -> Void) throws(Malformed) {
        var at = range.lowerBound
        let end = range.upperBound
        while at < end {
            let tag = try Self.varint(bytes, &at, end)
            let number = tag >> 3
            guard number > 0 && number < 1 << 29 else { throw Malformed(reason: "a field number of 0 or past 2^29") }
            switch tag & 7 {
            case 0:
                _ = try Self.varint(bytes, &at, end)
                try body(Int(number), .scalar)
            case 1, 5:
                let width = tag & 7 == 1 ? 8 : 4
                guard end - at >= width else { throw Malformed(reason: "a fixed-width field past the message's end") }
                at += width
                try body(Int(number), .scalar)
            case 2:
                let length = try Self.varint(bytes, &at, end)
                guard length <= UInt64(end - at) else { throw Malformed(reason: "a length past the message's end") }
                let inner = at..<at + Int(length)
                at = inner.upperBound
                try body(Int(number), .bytes(inner))
            default:
                throw Malformed(reason: "wire type \(tag & 7) (groups are not used by these messages)")
            }
        }
    }

    @inline(__always)
    private static func varint(_ bytes: UnsafeRawBufferPointer, _ at: inout Int, _ end: Int) throws(Malformed) -> UInt64 {
        // Tags and the lengths of short fields are one byte.
        if at < end, bytes[at] < 0x80 {
            at += 1
            return UInt64(bytes[at - 1])
        }
        return try longVarint(bytes, &at, end)
    }

    private static func longVarint(_ bytes: UnsafeRawBufferPointer, _ at: inout Int, _ end: Int) throws(Malformed) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < end {
            let byte = bytes[at]
            at += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift < 70 else { throw Malformed(reason: "a varint of more than ten bytes") }
        }
        throw Malformed(reason: "a varint past the message's end")
    }

    // MARK: Writing a CheckResponse

    /// gRPC status codes (the `CheckResponse.status.code` values and the call's own `grpc-status`).
    package enum GRPCStatus: Int {
        case ok = 0, invalidArgument = 3, deadlineExceeded = 4, permissionDenied = 7, resourceExhausted = 8
        case unimplemented = 12, internalError = 13, unavailable = 14, unauthenticated = 16
    }

    /// The HTTP door's answer as a serialized `CheckResponse`, preceded by gRPC's 5-byte message prefix, written to
    /// `out`. Sizes first (every nested message is length-prefixed), then the bytes, in one write.
    package func writeCheckResponse(_ answer: ServeResponse, to out: inout ByteBuffer) {
        let allowed = answer.status == 200
        let code: GRPCStatus
        switch answer.status {
        case 200: code = .ok
        case 401: code = .unauthenticated
        case 403: code = .permissionDenied
        case 503: code = .unavailable
        default: code = .internalError
        }
        let message = allowed ? "" : answer.refused?.rawValue ?? (answer.status == 401 ? "missing_token" : "refused")

        // The headers sent: over HTTP, only values IdentityHeaders.isSafe passes reach a client, and so here; an allow
        // sends the identity headers only, and asks Envoy to remove the identity headers it does not send.
        // An allow's identity headers come laid out already (IdentityAnswer), as the token's first answer wrote them.
        let identity = allowed ? answer.identity?.grpcLayout : nil
        var headersSize = identity?.bytes.count ?? 0
        var sent: UInt32 = identity?.identities ?? 0
        /// Which of the answer's headers are written (of those it sends: ServeResponse.sentHeaders).
        var written: UInt64 = 0
        answer.forEachHeader(in: answer.sentHeaders) { position, name, value in
            let identity = allowed ? Self.identityIndex(name) : nil
            guard !allowed || identity != nil else { return }
            headersSize += Self.fieldSize(Self.optionSize(name.utf8.count, value.utf8.count))
            written |= 1 << position
            if let identity { sent |= 1 << identity }
        }
        var removedSize = 0
        if allowed {
            for (index, name) in Self.identityHeaders.enumerated() where sent & (1 << index) == 0 {
                removedSize += Self.fieldSize(name.utf8.count)
            }
            if removesAuthorization { removedSize += Self.fieldSize("authorization".utf8.count) }
        }
        let statusSize = (code == .ok ? 0 : 1 + Self.varintSize(UInt64(code.rawValue)))
            + (message.isEmpty ? 0 : Self.fieldSize(message.utf8.count))
        let httpStatusSize = 1 + Self.varintSize(UInt64(answer.status))
        let httpSize = allowed
            ? headersSize + removedSize
            : Self.fieldSize(httpStatusSize) + headersSize + (answer.body.isEmpty ? 0 : Self.fieldSize(answer.body.utf8.count))
        let total = Self.fieldSize(statusSize) + Self.fieldSize(httpSize)

        out.writeWithUnsafeMutableBytes(minimumWritableBytes: 5 + total) { buffer in
            var out = ByteWriter(buffer: buffer)
            out.byte(0)   // not compressed
            out.byte(UInt8(truncatingIfNeeded: total >> 24)); out.byte(UInt8(truncatingIfNeeded: total >> 16))
            out.byte(UInt8(truncatingIfNeeded: total >> 8)); out.byte(UInt8(truncatingIfNeeded: total))
            // CheckResponse.status (1): google.rpc.Status { code (1), message (2) }.
            out.tag(1, length: statusSize)
            if code != .ok {
                out.byte(1 << 3)
                out.varint(UInt64(code.rawValue))
            }
            if !message.isEmpty { out.string(2, message) }
            // CheckResponse.ok_response (3) or denied_response (2).
            out.tag(allowed ? 3 : 2, length: httpSize)
            if !allowed {
                // DeniedHttpResponse.status (1): HttpStatus { code (1) }, the HTTP status as Envoy's StatusCode enum.
                out.tag(1, length: httpStatusSize)
                out.byte(1 << 3)
                out.varint(UInt64(answer.status))
            }
            // headers (2 in both).
            if let identity { out.bytes(identity.bytes) }
            answer.forEachHeader(in: written) { _, name, value in out.headerOption(name, value) }
            if allowed {
                // OkHttpResponse.headers_to_remove (5).
                for (index, name) in Self.identityHeaders.enumerated() where sent & (1 << index) == 0 { out.string(5, name) }
                if removesAuthorization { out.string(5, "authorization") }
            } else if !answer.body.isEmpty {
                out.string(3, answer.body)   // DeniedHttpResponse.body (3)
            }
            return out.at
        }
    }

    /// The `headers` fields of an allow's identity headers (those of them named in ``identityHeaders``), and which of
    /// ``identityHeaders`` they are, from the HTTP door's `Name: value\r\n` lines (``IdentityAnswer/http``): laid out
    /// once per token when the answer is kept.
    static func identityOptions(http: [UInt8]) -> (bytes: [UInt8], identities: UInt32) {
        http.withUnsafeBytes { lines in
            // Each line's name and value: the name (a token) ends at the first colon, the value after ": " at the CR.
            var fields: [(name: Range<Int>, value: Range<Int>)] = []
            var start = 0
            while start < lines.count {
                var colon = start
                while lines[colon] != UInt8(ascii: ":") { colon += 1 }
                var end = colon + 2
                while lines[end] != 13 { end += 1 }
                fields.append((start..<colon, colon + 2..<end))
                start = end + 2
            }
            var size = 0
            var identities: UInt32 = 0
            var written: UInt64 = 0
            for (position, field) in fields.prefix(64).enumerated() {
                guard let index = identityIndex(UnsafeRawBufferPointer(rebasing: lines[field.name])) else { continue }
                identities |= 1 << index
                written |= 1 << position
                size += fieldSize(optionSize(field.name.count, field.value.count))
            }
            let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                var out = ByteWriter(buffer: UnsafeMutableRawBufferPointer(buffer))
                for (position, field) in fields.prefix(64).enumerated() where written & (1 << position) != 0 {
                    out.headerOption(UnsafeRawBufferPointer(rebasing: lines[field.name]), UnsafeRawBufferPointer(rebasing: lines[field.value]))
                }
                count = out.at
            }
            return (bytes, identities)
        }
    }

    /// The index in ``identityHeaders`` of a header name (compared without case).
    private static func identityIndex(_ name: String) -> Int? {
        name.withBorrowedUTF8 { identityIndex(UnsafeRawBufferPointer($0)) }
    }

    private static func identityIndex(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let count = bytes.count
        // Every identity header starts with `x-auth-`.
        guard count > 7, bytes[0] | 0x20 == UInt8(ascii: "x") else { return nil }
        for index in identityBytes.indices where identityBytes[index].count == count {
            let identity = identityBytes[index]
            var same = true
            for offset in 0..<count where (bytes[offset] >= 0x41 && bytes[offset] <= 0x5A ? bytes[offset] | 0x20 : bytes[offset]) != identity[offset] {
                same = false
                break
            }
            if same { return index }
        }
        return nil
    }

    private static let identityBytes = identityHeaders.map { Array($0.utf8) }

    /// A HeaderValue's size: key (1) and value (2, left out when empty), of these lengths.
    fileprivate static func headerValueSize(_ name: Int, _ value: Int) -> Int {
        fieldSize(name) + (value == 0 ? 0 : fieldSize(value))
    }

    /// A HeaderValueOption's size: its HeaderValue and append_action.
    fileprivate static func optionSize(_ name: Int, _ value: Int) -> Int {
        fieldSize(headerValueSize(name, value)) + 2
    }

    /// A length-delimited field of a number below 16: tag, length, bytes.
    private static func fieldSize(_ length: Int) -> Int { 1 + varintSize(UInt64(length)) + length }

    private static func varintSize(_ value: UInt64) -> Int {
        var value = value, size = 1
        while value >= 0x80 { value >>= 7; size += 1 }
        return size
    }
}

/// The protobuf wire format's pieces, for the `CheckResponse`.
private extension ByteWriter {
    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            byte(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        byte(UInt8(value))
    }

    /// A length-delimited field's tag (numbers below 16) and length.
    mutating func tag(_ number: Int, length: Int) {
        byte(UInt8(number << 3 | 2))
        varint(UInt64(length))
    }

    mutating func string(_ number: Int, _ value: String) {
        value.withBorrowedUTF8 { field(number, UnsafeRawBufferPointer($0)) }
    }

    /// A length-delimited field: tag, length, bytes.
    mutating func field(_ number: Int, _ value: UnsafeRawBufferPointer) {
        tag(number, length: value.count)
        bytes(value)
    }

    /// A `headers` field (2 in `OkHttpResponse` and `DeniedHttpResponse`): HeaderValueOption { header (1):
    /// HeaderValue { key (1), value (2) }, append_action (3) }, the name lower-case.
    mutating func headerOption(_ name: String, _ value: String) {
        name.withBorrowedUTF8 { name in
            value.withBorrowedUTF8 { value in headerOption(UnsafeRawBufferPointer(name), UnsafeRawBufferPointer(value)) }
        }
    }

    mutating func headerOption(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        tag(2, length: ExternalAuthorization.optionSize(name.count, value.count))
        tag(1, length: ExternalAuthorization.headerValueSize(name.count, value.count))
        tag(1, length: name.count)
        bytes(name, lowercased: true)
        if !value.isEmpty { field(2, value) }
        byte(3 << 3)
        byte(2)   // OVERWRITE_IF_EXISTS_OR_ADD
    }
}
