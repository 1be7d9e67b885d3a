#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Limits applied before and while a token is read.
public struct JWSLimits: Sendable, Equatable {
    /// Tokens longer than this (in bytes) are refused before any other work.
    public var maxTokenBytes: Int
    /// The deepest nesting accepted in the header or the claims (never more than ``JSONObject/depthCeiling``).
    public var maxDepth: Int

    public init(maxTokenBytes: Int = 16 * 1024, maxDepth: Int = JSONObject.defaultMaxDepth) {
        self.maxTokenBytes = maxTokenBytes
        self.maxDepth = maxDepth
    }

    public static let `default` = JWSLimits()
}

/// A token's protected header, read but not trusted.
public struct JOSEHeader: Sendable {
    /// The whole header object.
    public let object: JSONObject
    /// The algorithm the header names, when it is one this library implements.
    public let algorithm: JWSAlgorithm?

    /// The `alg` value as written (for messages), or nil if absent or not a string.
    public var algorithmName: String? { object["alg"]?.string }
    /// The `kid` value, or nil if absent.
    public var kid: String? { object["kid"]?.string }
    /// The `typ` value, or nil if absent.
    public var type: String? { object["typ"]?.string }
}

/// A JWS in compact serialization (`header.payload.signature`), split and checked for shape but not verified.
///
/// Parsing does the cheap checks of the pipeline: the size cap, exactly two dots, strict base64url in all three
/// segments, a header that is a JSON object without duplicate members, an `alg` that is a string naming an
/// asymmetric algorithm, no `crit`, and a string `kid` if there is one. Header members that carry or point to
/// keys (`jwk`, `jku`, `x5u`, `x5c`) are never read. The signature is checked over the token's own ASCII bytes
/// `header.payload`, never a re-encoding.
public struct CompactJWS: Sendable {
    /// The token as received.
    public let token: String
    public let header: JOSEHeader
    /// The decoded payload bytes (not yet parsed as JSON: that happens after the signature, see ``claims(maxDepth:)``).
    public let payload: [UInt8]
    @usableFromInline let firstDot: Int
    @usableFromInline let secondDot: Int

    /// Splits and checks `token`. Throws a ``TokenError`` with code `token_too_large`, `malformed`,
    /// `algorithm_not_allowed`, `unsupported_header` or `unknown_key`.
    public init(_ token: String, limits: JWSLimits = .default) throws(TokenError) {
        var token = token
        let utf8Count = token.utf8.count
        guard utf8Count <= limits.maxTokenBytes else {
            throw TokenError(.tokenTooLarge, "the token is \(utf8Count) bytes; the limit is \(limits.maxTokenBytes)")
        }
        let parts = token.withUTF8 { bytes -> Result<(Int, Int, JOSEHeader, [UInt8]), TokenError> in
            do throws(TokenError) { return .success(try CompactJWS.split(bytes, limits: limits)) } catch { return .failure(error) }
        }
        self.token = token
        (firstDot, secondDot, header, payload) = try parts.get()
    }

    @usableFromInline
    static func split(_ bytes: UnsafeBufferPointer<UInt8>, limits: JWSLimits) throws(TokenError) -> (Int, Int, JOSEHeader, [UInt8]) {
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
        let dots = (first, second)
        let headerSpan = UnsafeBufferPointer(rebasing: bytes[0..<dots.0])
        let payloadSpan = UnsafeBufferPointer(rebasing: bytes[(dots.0 + 1)..<dots.1])
        let signatureSpan = UnsafeBufferPointer(rebasing: bytes[(dots.1 + 1)...])
        guard !headerSpan.isEmpty else { throw TokenError.malformed("the header segment is empty") }
        guard Base64URL.isCanonical(signatureSpan) else {
            throw TokenError.malformed("the signature segment is not canonical base64url")
        }

        // Header.
        guard let headerBytes = decodeSegment(headerSpan) else {
            throw TokenError.malformed("the header segment is not canonical base64url")
        }
        let headerObject: JSONObject
        do { headerObject = try JSONObject.parse(headerBytes, maxDepth: limits.maxDepth) } catch {
            throw TokenError.malformed("the header is not a valid JSON object: \(error)")
        }
        guard let alg = headerObject["alg"] else {
            throw TokenError(.algorithmNotAllowed, claim: "alg", "the header has no \"alg\"")
        }
        guard alg.kind == .string else {
            throw TokenError(.algorithmNotAllowed, claim: "alg", "the header's \"alg\" is not a string")
        }
        let algorithm = alg.withBody { raw in
            JWSAlgorithm(utf8: UnsafeBufferPointer(rebasing: raw[(raw.startIndex + 1)..<(raw.endIndex - 1)]))
        }
        if algorithm == nil {
            let name = alg.string ?? ""
            throw TokenError(.algorithmNotAllowed, claim: "alg", CompactJWS.describeRefusedAlgorithm(name))
        }
        if headerObject.contains("crit") {
            throw TokenError(.unsupportedHeader, claim: "crit",
                             "the header has \"crit\"; no critical header extension is understood, so the token is refused")
        }
        if let kid = headerObject["kid"], kid.kind != .string {
            throw TokenError(.unknownKey, claim: "kid", "the header's \"kid\" is not a string")
        }
        // Checked after the header so that an unsigned token (`"alg":"none"` with an empty signature, the usual
        // shape of that attack) is reported as the refused algorithm it is, not as a bad signature.
        guard !signatureSpan.isEmpty else { throw TokenError(.badSignature, "the signature segment is empty") }

        // Payload: decoded now, parsed only after the signature is checked.
        guard let payload = decodeSegment(payloadSpan) else {
            throw TokenError.malformed("the payload segment is not canonical base64url")
        }
        return (dots.0, dots.1, JOSEHeader(object: headerObject, algorithm: algorithm), payload)
    }

    static func describeRefusedAlgorithm(_ name: String) -> String {
        switch name.lowercased() {
        case "none": return "unsigned tokens (\"alg\": \"\(name)\") are never accepted"
        case "hs256", "hs384", "hs512": return "HMAC (\"\(name)\") is never accepted for tokens signed with a public key"
        default: return "the algorithm \"\(name)\" is not supported"
        }
    }

    @usableFromInline
    static func decodeSegment(_ span: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let count = Base64URL.decodedCount(forEncodedCount: span.count) else { return nil }
        var ok = true
        let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let n = Base64URL.decode(span, into: buffer) { initialized = n } else { initialized = 0; ok = false }
        }
        return ok ? out : nil
    }

    /// Checks the signature with `key` over the received `header.payload` bytes. The caller has already made
    /// sure that `key` belongs to an algorithm the policy allows and that it matches the header.
    @inlinable
    public func verifySignature(with key: PublicKey) -> Bool {
        var token = token
        return token.withUTF8 { bytes in
            let signingInput = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[0..<secondDot])
            let segment = UnsafeBufferPointer(rebasing: bytes[(secondDot + 1)...])
            guard let count = Base64URL.decodedCount(forEncodedCount: segment.count), count == key.signatureLength else {
                return false
            }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { signature in
                guard Base64URL.decode(segment, into: signature) == count else { return false }
                return key.verify(signature: UnsafeRawBufferPointer(signature), message: signingInput)
            }
        }
    }

    /// The payload parsed as a JSON object (strict: no duplicate members, valid UTF-8, depth-capped).
    public func claims(maxDepth: Int = JSONObject.defaultMaxDepth) throws(TokenError) -> JSONObject {
        do { return try JSONObject.parse(payload, maxDepth: maxDepth) } catch {
            throw TokenError.malformed("the payload is not a valid JSON object: \(error)")
        }
    }

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
        guard let algorithm = header.algorithm, allowed.contains(algorithm) else {
            let name = header.algorithmName ?? ""
            let list = allowed.map(\.rawValue).sorted().joined(separator: ", ")
            throw TokenError(.algorithmNotAllowed, claim: "alg", "the algorithm \"\(name)\" is not allowed here (allowed: \(list))")
        }
        let key: PublicKey
        if let kid = header.object["kid"] {
            let found = kid.withBody { raw -> PublicKey? in
                let inner = UnsafeBufferPointer(rebasing: raw[(raw.startIndex + 1)..<(raw.endIndex - 1)])
                if kid.escaped { return JSONReader.unescape(inner).withUnsafeBufferPointer { keys.key(kid: $0) } }
                return keys.key(kid: inner)
            }
            guard let found else {
                let shown = String((kid.string ?? "").prefix(80))
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

extension Base64URL {
    /// Whether `span` is canonical base64url, without decoding it.
    @inlinable
    public static func isCanonical(_ span: UnsafeBufferPointer<UInt8>) -> Bool {
        guard decodedCount(forEncodedCount: span.count) != nil else { return false }
        return decodeTable.withUnsafeBufferPointer { table in
            var bad: UInt8 = 0
            for byte in span { bad |= table[Int(byte)] }
            guard bad & 0xC0 == 0 else { return false }
            switch span.count & 3 {
            case 2: return table[Int(span[span.count - 1])] & 0x0F == 0
            case 3: return table[Int(span[span.count - 1])] & 0x03 == 0
            default: return true
            }
        }
    }
}
