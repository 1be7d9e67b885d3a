#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JWS in compact serialization (`header.payload.signature`), split and checked for shape but not verified.
///
/// Parsing does the cheap checks of the pipeline: the size cap, exactly two dots, strict base64url in all three
/// segments, a header that is a JSON object without duplicate members, an `alg` that is a string naming an
/// asymmetric algorithm, no `crit`, and a string `kid` if there is one. Header members that carry or point to
/// keys (`jwk`, `jku`, `x5u`, `x5c`) are never read. The signature is checked over the token's own ASCII bytes
/// `header.payload`, never a re-encoding.
///
/// The three segments are decoded into one allocation, and the header is read with a member table on the
/// stack: splitting a token allocates once. A token split from bytes (`init(bytes:limits:)`, for batch work that
/// holds its input as bytes) keeps its text in that allocation too, after the signature.
public struct CompactJWS: Sendable {
    /// The token as given to ``init(_:limits:)``; nil for a token split from bytes, whose text is in the storage.
    @usableFromInline let text: String?
    /// The protected header, read and checked.
    public let header: JOSEHeader
    /// Where the decoded payload and signature lie in `header.storage` (the header's bytes come first).
    @usableFromInline let payloadCount: Int32
    @usableFromInline let signatureCount: Int32
    @usableFromInline let firstDot: Int
    @usableFromInline let secondDot: Int
    /// The token's length in bytes.
    @usableFromInline let tokenCount: Int

    /// The token as received.
    public var token: String {
        if let text { return text }
        return String(decoding: UnsafeRawBufferPointer(start: storedText, count: tokenCount), as: UTF8.self)
    }

    /// Where a token split from bytes keeps its text: after the decoded segments.
    @inlinable
    var storedText: UnsafePointer<UInt8> {
        UnsafePointer(header.storage.bytes + Int(header.count) + Int(payloadCount) + Int(signatureCount))
    }

    /// Calls `body` with the token's bytes, read where they are (the given string's, or the storage's).
    @inlinable
    package func withTokenBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let text { return text.withBorrowedUTF8 { body(UnsafeRawBufferPointer($0)) } }
        return body(UnsafeRawBufferPointer(start: storedText, count: tokenCount))
    }

    /// The decoded payload bytes (not yet parsed as JSON: that happens after the signature, see ``claims(maxDepth:)``).
    public var payload: [UInt8] {
        Array(UnsafeBufferPointer(start: header.storage.bytes + Int(header.count), count: Int(payloadCount)))
    }

    /// Splits and checks `token`. Throws a ``TokenError`` with code `token_too_large`, `malformed`,
    /// `algorithm_not_allowed`, `unsupported_header` or `unknown_key`.
    public init(_ token: String, limits: JWSLimits = .default) throws(TokenError) {
        let utf8Count = token.utf8.count
        try CompactJWS.checkSize(utf8Count, limits: limits)
        func split(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<Parts, TokenError> {
            do throws(TokenError) { return .success(try CompactJWS.split(bytes, limits: limits)) } catch { return .failure(error) }
        }
        self.init(try token.withBorrowedUTF8(split).get(), text: token, tokenCount: utf8Count)
    }

    /// Splits and checks the token `bytes`, as ``init(_:limits:)`` does its text, keeping a copy of them: for batch
    /// work whose tokens are bytes of its input, which then need no `String` each (``token`` makes one when asked).
    package init(bytes: UnsafeRawBufferPointer, limits: JWSLimits = .default) throws(TokenError) {
        try CompactJWS.checkSize(bytes.count, limits: limits)
        self.init(try CompactJWS.split(bytes.assumingMemoryBound(to: UInt8.self), limits: limits, keepingText: true),
                  text: nil, tokenCount: bytes.count)
    }

    /// A split token from its parts.
    private init(_ split: Parts, text: String?, tokenCount: Int) {
        self.text = text
        self.tokenCount = tokenCount
        self.header = split.header
        self.payloadCount = split.payloadCount
        self.signatureCount = split.signatureCount
        self.firstDot = split.firstDot
        self.secondDot = split.secondDot
    }

    /// The size cap, checked before anything is read.
    private static func checkSize(_ count: Int, limits: JWSLimits) throws(TokenError) {
        guard count <= limits.maxTokenBytes else {
            throw TokenError(.tokenTooLarge, "the token is \(count) bytes; the limit is \(limits.maxTokenBytes)")
        }
    }

    @usableFromInline
    struct Parts {
        @usableFromInline let header: JOSEHeader
        @usableFromInline let payloadCount: Int32
        @usableFromInline let signatureCount: Int32
        @usableFromInline let firstDot: Int
        @usableFromInline let secondDot: Int
    }

    @usableFromInline static let algKey = JSONKey("alg")
    @usableFromInline static let kidKey = JSONKey("kid")
    @usableFromInline static let critKey = JSONKey("crit")

    /// - Parameter keepingText: copy `bytes` into the storage, after the signature (`init(bytes:limits:)`).
    @usableFromInline
    static func split(_ bytes: UnsafeBufferPointer<UInt8>, limits: JWSLimits, keepingText: Bool = false) throws(TokenError) -> Parts {
        // memchr finds the dots several bytes per instruction; a token is mostly payload.
        let base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        let count = bytes.count
        func dot(after start: Int) -> Int? {
            guard start < count, let hit = memchr(base + start, 0x2E, count - start) else { return nil }
            return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
        }
        guard let first = dot(after: 0), let second = dot(after: first + 1), dot(after: second + 1) == nil else {
            var dotCount = 0
            for byte in bytes where byte == UInt8(ascii: ".") { dotCount += 1 }
            let segments = dotCount + 1
            throw TokenError.malformed("a compact JWS has three segments separated by two dots; this token has \(segments)")
        }
        let headerSpan = UnsafeBufferPointer(rebasing: bytes[0..<first])
        let payloadSpan = UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second])
        let signatureSpan = UnsafeBufferPointer(rebasing: bytes[(second + 1)...])
        guard !headerSpan.isEmpty else { throw TokenError.malformed("the header segment is empty") }

        // One allocation for the three decoded segments: header, payload, signature. A segment whose length no
        // canonical encoding has gets no room; it is reported below, in the order the checks have always run.
        let headerCount = Base64URL.decodedCount(forEncodedCount: headerSpan.count)
        let payloadCount = Base64URL.decodedCount(forEncodedCount: payloadSpan.count)
        guard let signatureCount = Base64URL.decodedCount(forEncodedCount: signatureSpan.count) else {
            throw TokenError.malformed("the signature segment is not canonical base64url")
        }
        let signatureStart = (headerCount ?? 0) + (payloadCount ?? 0)
        // Room for the claims' member table comes with it (see ``claims(maxDepth:)``).
        let storage = JSONDocument.storage(byteCount: signatureStart + signatureCount + (keepingText ? count : 0),
                                           memberCapacity: JSONReader.stackTableCapacity, base: headerCount ?? 0)
        let out = storage.bytes
        if keepingText, count > 0 { (out + signatureStart + signatureCount).initialize(from: base, count: count) }
        guard Base64URL.decode(signatureSpan, into: UnsafeMutableBufferPointer(start: out + signatureStart, count: signatureCount)) != nil else {
            throw TokenError.malformed("the signature segment is not canonical base64url")
        }

        // Header: recalled when this thread has read the same segment before (see ``HeaderMemo``).
        guard let headerCount else { throw TokenError.malformed("the header segment is not canonical base64url") }
        let header: JOSEHeader
        if let known = HeaderMemo.recall(headerSpan, maxDepth: limits.maxDepth, into: out, storage: storage) {
            header = known
        } else {
            guard Base64URL.decode(headerSpan, into: UnsafeMutableBufferPointer(start: out, count: headerCount)) != nil else {
                throw TokenError.malformed("the header segment is not canonical base64url")
            }
            header = try readHeader(storage, count: headerCount, maxDepth: limits.maxDepth)
            HeaderMemo.remember(headerSpan, maxDepth: limits.maxDepth, header: header)
        }
        // Checked after the header so that an unsigned token (`"alg":"none"` with an empty signature, the usual
        // shape of that attack) is reported as the refused algorithm it is, not as a bad signature.
        guard !signatureSpan.isEmpty else { throw TokenError(.badSignature, "the signature segment is empty") }

        // Payload: decoded now, parsed only after the signature is checked.
        guard let payloadCount, Base64URL.decode(payloadSpan, into: UnsafeMutableBufferPointer(start: out + headerCount, count: payloadCount)) != nil else {
            throw TokenError.malformed("the payload segment is not canonical base64url")
        }
        return Parts(header: header, payloadCount: Int32(payloadCount), signatureCount: Int32(signatureCount),
                     firstDot: first, secondDot: second)
    }

    /// Reads the decoded header (the first `count` bytes of `storage`) with a member table on the stack and
    /// checks `alg`, `crit` and `kid`, keeping only what verification needs.
    @usableFromInline
    static func readHeader(_ storage: JSONDocument, count: Int, maxDepth: Int) throws(TokenError) -> JOSEHeader {
        let base = UnsafePointer(storage.bytes)
        guard count <= JSONReader.maxDocumentBytes else { throw TokenError.malformed("the header is larger than 2 GiB") }
        return try JSONReader.withReader(UnsafeBufferPointer(start: base, count: count), maxDepth: maxDepth) {
            (reader: inout JSONReader) throws(TokenError) -> JOSEHeader in
            let first: Int32
            do { first = try reader.readTopLevelObject() } catch {
                throw TokenError.malformed("the header is not a valid JSON object: \(error)")
            }
            let table = UnsafePointer(reader.table)
            guard let algIndex = algKey.index(in: table, first: first, base: base) else {
                throw TokenError(.algorithmNotAllowed, claim: "alg", "the header has no \"alg\"")
            }
            let alg = table[algIndex]
            guard alg.kind == .string else {
                throw TokenError(.algorithmNotAllowed, claim: "alg", "the header's \"alg\" is not a string")
            }
            let algorithm = JWSAlgorithm(utf8: UnsafeBufferPointer(start: base + Int(alg.valueStart) + 1,
                                                                   count: Int(alg.valueEnd - alg.valueStart) - 2))
            if algorithm == nil {
                let inner = UnsafeBufferPointer(start: base + Int(alg.valueStart) + 1, count: Int(alg.valueEnd - alg.valueStart) - 2)
                let name = String(decoding: alg.valueEscaped ? JSONReader.unescape(inner) : Array(inner), as: UTF8.self)
                throw TokenError(.algorithmNotAllowed, claim: "alg", CompactJWS.describeRefusedAlgorithm(name))
            }
            if critKey.index(in: table, first: first, base: base) != nil {
                throw TokenError(.unsupportedHeader, claim: "crit",
                                 "the header has \"crit\"; no critical header extension is understood, so the token is refused")
            }
            var kid: (start: Int32, end: Int32, escaped: Bool) = (-1, -1, false)
            if let kidIndex = kidKey.index(in: table, first: first, base: base) {
                let member = table[kidIndex]
                guard member.kind == .string else {
                    throw TokenError(.unknownKey, claim: "kid", "the header's \"kid\" is not a string")
                }
                kid = (member.valueStart, member.valueEnd, member.valueEscaped)
            }
            return JOSEHeader(storage: storage, count: Int32(count), kidStart: kid.start, kidEnd: kid.end,
                              kidEscaped: kid.escaped, algorithm: algorithm)
        }
    }

    static func describeRefusedAlgorithm(_ name: String) -> String {
        switch name.lowercased() {
        case "none": return "unsigned tokens (\"alg\": \"\(name)\") are never accepted"
        case "hs256", "hs384", "hs512": return "HMAC (\"\(name)\") is never accepted for tokens signed with a public key"
        default: return "the algorithm \"\(name)\" is not supported"
        }
    }

    /// Checks the signature with `key` over the received `header.payload` bytes. The caller has already made
    /// sure that `key` belongs to an algorithm the policy allows and that it matches the header.
    @inlinable
    public func verifySignature(with key: PublicKey) -> Bool {
        guard Int(signatureCount) == key.signatureLength else { return false }
        // `self` holds the storage for the whole call, so the pointer into it stays valid without a retain.
        let signature = UnsafeRawBufferPointer(start: header.storage.bytes + Int(header.count) + Int(payloadCount),
                                               count: Int(signatureCount))
        return withTokenBytes { bytes in
            key.verify(signature: signature, message: UnsafeRawBufferPointer(start: bytes.baseAddress, count: secondDot))
        }
    }

    /// The payload parsed as a JSON object (strict: no duplicate members, valid UTF-8, depth-capped), a view on
    /// the token's decoded bytes.
    ///
    /// The first reading indexes the payload into the room its storage keeps for that, so that verifying a
    /// token allocates nothing more; any later reading (of this value or a copy) gets a table of its own.
    public func claims(maxDepth: Int = JSONObject.defaultMaxDepth) throws(TokenError) -> JSONObject {
        let storage = header.storage
        do {
            if let room = storage.claimMemberArea() {
                return try JSONObject.parse(in: storage, count: Int(payloadCount), maxDepth: maxDepth,
                                            table: room.table, capacity: room.capacity)
            }
            return try JSONObject.parse(owner: storage, base: storage.base, count: Int(payloadCount), maxDepth: maxDepth)
        } catch {
            throw TokenError.malformed("the payload is not a valid JSON object: \(error)")
        }
    }

    /// Where the payload segment (base64url, as received) lies in the token's UTF-8 bytes; the signed
    /// `header.payload` ends where it ends. Carried from the split, so that no door looks for the dots again.
    public var payloadRange: Range<Int> { (firstDot + 1)..<secondDot }

    /// The ASCII bytes that were signed: `header.payload`, as received.
    public var signingInput: Substring { token[..<token.utf8.index(token.utf8.startIndex, offsetBy: secondDot)] }

    /// The signature segment as received (base64url).
    public var signatureSegment: Substring { token[token.utf8.index(token.utf8.startIndex, offsetBy: secondDot + 1)...] }

    /// Steps 1–5 of the pipeline in one call: shape, header, key, signature, claims.
    ///
    /// `allowed` is the policy's algorithm list; the header's `alg` must be in it and must be the algorithm the
    /// key is bound to. Keys are looked up by `kid` only; a header without `kid` matches only when the set
    /// holds exactly one key and `requireKid` is false.
    public static func verify(_ token: String, keys: JWKSet, allowed: Set<JWSAlgorithm>, requireKid: Bool = true,
                              limits: JWSLimits = .default) throws(TokenError) -> (CompactJWS, JSONObject) {
        let jws = try CompactJWS(token, limits: limits)
        let key = try jws.selectKey(from: keys, allowed: allowed, requireKid: requireKid)
        guard jws.verifySignature(with: key) else {
            throw TokenError(.badSignature, "the signature does not verify with key \"\(key.kid ?? "(no kid)")\"")
        }
        return (jws, try jws.claims(maxDepth: limits.maxDepth))
    }

    /// Checks the header's algorithm against the policy and finds its key (pipeline steps 2–3).
    public func selectKey(from keys: JWKSet, allowed: Set<JWSAlgorithm>, requireKid: Bool = true) throws(TokenError) -> PublicKey {
        try selectKey(from: keys, allowed: JWSAlgorithmMask(allowed), requireKid: requireKid)
    }

    /// ``selectKey(from:allowed:requireKid:)`` with the policy's algorithms as a mask, which a verifier makes
    /// once instead of hashing the algorithm into a `Set` for every token.
    public func selectKey(from keys: JWKSet, allowed: JWSAlgorithmMask, requireKid: Bool = true) throws(TokenError) -> PublicKey {
        guard let algorithm = header.algorithm, allowed.contains(algorithm) else {
            let name = header.algorithmName ?? ""
            let list = allowed.algorithms.map(\.rawValue).sorted().joined(separator: ", ")
            throw TokenError(.algorithmNotAllowed, claim: "alg", "the algorithm \"\(name)\" is not allowed here (allowed: \(list))")
        }
        let key: PublicKey
        if header.hasKid {
            guard let found = header.withKid({ keys.key(kid: $0!) }) else {
                let shown = String((header.kid ?? "").prefix(80))
                throw TokenError(.unknownKey, claim: "kid", "no key with kid \"\(shown)\" in the key set")
            }
            key = found
        } else {
            guard !requireKid, keys.keys.count == 1 else {
                throw TokenError(.unknownKey, claim: "kid", "the header has no \"kid\", so no key can be chosen")
            }
            key = keys.keys[0]
        }
        guard key.algorithm == algorithm else {
            throw TokenError(.algorithmNotAllowed, claim: "alg",
                             "the header says \(algorithm.rawValue) but key \"\(key.kid ?? "")\" is a \(key.algorithm.keyType) key for \(key.algorithm.rawValue)")
        }
        return key
    }
}
