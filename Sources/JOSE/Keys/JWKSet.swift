/// A key that a key set refused, and why. One bad key never sinks the rest of a set.
public struct RejectedKey: Sendable, Equatable, CustomStringConvertible {
    /// The key's `kid`, when it had one.
    public let kid: String?
    /// Why the key was refused.
    public let reason: String
    /// A refused key and the reason.
    public init(kid: String?, reason: String) {
        self.kid = kid
        self.reason = reason
    }
    public var description: String { "\(kid ?? "(no kid)"): \(reason)" }
}

/// An immutable set of verification keys, looked up by `kid`.
///
/// Built from a JWKS (`{"keys":[…]}`), a single JWK, or Google's kid → PEM certificate map. Each usable key is
/// parsed once; keys that cannot be used (symmetric, `use` other than `sig`, RSA under 2048 bits or with a
/// ROCA-weak modulus, a point off the curve, unknown `kty`/`crv`/`alg`, a `kid` that names two different keys)
/// are listed in ``rejected``.
public struct JWKSet: Sendable {
    /// The usable keys, in document order.
    public let keys: [PublicKey]
    /// The keys of the document that were refused (weak, malformed, unsupported), with the reason for each.
    public let rejected: [RejectedKey]
    @usableFromInline let kidBytes: [[UInt8]]
    @usableFromInline let kidHashes: [UInt64]
    /// For sets of more than ``indexedFrom`` keys: kid hash → positions. Providers publish two or three keys, for
    /// which a scan is fastest; a set of thousands (a key archive, a misbehaving endpoint) must not make every
    /// lookup scan them all.
    @usableFromInline let kidIndex: [UInt64: [Int]]?
    @usableFromInline static var indexedFrom: Int { 16 }

    /// A set of `keys`; `rejected` lists keys of the same document that were refused.
    public init(keys: [PublicKey], rejected: [RejectedKey] = []) {
        // A kid that names two different keys is ambiguous: neither is used.
        var seen: [String: String] = [:]
        var ambiguous: Set<String> = []
        for key in keys {
            guard let kid = key.kid else { continue }
            if let thumb = seen[kid], thumb != key.thumbprint { ambiguous.insert(kid) }
            seen[kid] = key.thumbprint
        }
        var kept: [PublicKey] = []
        var rejected = rejected
        var keptKids: Set<String> = []
        var keptWithoutKid: Set<String> = []
        for key in keys {
            if let kid = key.kid {
                if ambiguous.contains(kid) {
                    rejected.append(RejectedKey(kid: kid, reason: "the kid names more than one key"))
                    continue
                }
                if !keptKids.insert(kid).inserted { continue }  // the same key listed twice
            } else if !keptWithoutKid.insert(key.thumbprint + " " + key.algorithm.rawValue).inserted {
                // The same key without a kid, listed twice (or met again by `merging`): one copy, so that a token
                // without a kid still finds the set's only key.
                continue
            }
            kept.append(key)
        }
        self.keys = kept
        self.rejected = rejected
        self.kidBytes = kept.map { Array(($0.kid ?? "").utf8) }
        let kidHashes = kidBytes.map { bytes in
            bytes.withUnsafeBufferPointer { JSONReader.fnv($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count) }
        }
        self.kidHashes = kidHashes
        if kept.count > JWKSet.indexedFrom {
            var index: [UInt64: [Int]] = [:]
            for (k, hash) in kidHashes.enumerated() where kept[k].kid != nil { index[hash, default: []].append(k) }
            self.kidIndex = index
        } else {
            self.kidIndex = nil
        }
    }

    /// An empty set.
    public static let empty = JWKSet(keys: [])

    public var isEmpty: Bool { keys.isEmpty }

    /// The key whose `kid` has these UTF-8 bytes.
    @inlinable
    package func key(kid: UnsafeBufferPointer<UInt8>) -> PublicKey? {
        let hash = JSONReader.fnv(kid.baseAddress ?? UnsafePointer(bitPattern: 1)!, kid.count)
        if let kidIndex {
            guard let positions = kidIndex[hash] else { return nil }
            for k in positions where kidBytes[k].withUnsafeBufferPointer({ bytesEqual($0, kid) }) { return keys[k] }
            return nil
        }
        for k in kidHashes.indices where kidHashes[k] == hash {
            if kidBytes[k].withUnsafeBufferPointer({ bytesEqual($0, kid) }), keys[k].kid != nil { return keys[k] }
        }
        return nil
    }

    /// The same keys in objects of their own (``PublicKey/replica()``; a key libcrypto cannot copy is shared), for a
    /// thread that verifies apart from the others.
    package func replica() -> JWKSet {
        JWKSet(keys: keys.map { $0.replica() ?? $0 }, rejected: rejected)
    }

    /// The key with this `kid`.
    public func key(kid: String) -> PublicKey? {
        var kid = kid
        return kid.withUTF8 { key(kid: $0) }
    }

    /// Every kid in the set.
    public var kids: [String] { keys.compactMap(\.kid) }

    /// Whether `other` holds the same keys: the same `kid`s, each bound to the same algorithm and key material
    /// (``PublicKey/thumbprint``), in any order, and the same refused keys. A key set refetched unchanged is
    /// kept as it was, so that what was verified with its keys (a verified-token cache) stays valid.
    public func hasSameKeys(as other: JWKSet) -> Bool {
        guard keys.count == other.keys.count, rejected == other.rejected else { return false }
        func identity(_ key: PublicKey) -> String { "\(key.kid ?? "")\u{0}\(key.algorithm.rawValue)\u{0}\(key.thumbprint)" }
        return keys.map(identity).sorted() == other.keys.map(identity).sorted()
    }

    /// The union of two sets; on a kid in both, `self` wins.
    public func merging(_ other: JWKSet) -> JWKSet {
        let mine = Set(kids)
        return JWKSet(keys: keys + other.keys.filter { $0.kid == nil || !mine.contains($0.kid!) },
                      rejected: rejected + other.rejected)
    }

    // MARK: Parsing

    /// Why a whole document could not be read as a key set.
    public struct FormatError: Error, Sendable, CustomStringConvertible {
        /// Why the document was refused.
        public let reason: String
        public var description: String { reason }
    }

    /// Reads a JWKS, a single JWK, or a kid → PEM-certificate map, whichever `bytes` holds.
    public static func parse(_ bytes: [UInt8]) throws(FormatError) -> JWKSet {
        let tree: JSONTree
        do { tree = try JSONTree.parse(bytes, maxDepth: 8) } catch {
            throw FormatError(reason: "not valid JSON: \(error)")
        }
        guard let members = tree.objectMembers else { throw FormatError(reason: "a key set must be a JSON object") }
        if let keys = tree["keys"] {
            guard let list = keys.array else { throw FormatError(reason: "\"keys\" must be an array") }
            return fromJWKs(list)
        }
        if tree["kty"] != nil { return fromJWKs([tree]) }
        // A certificate map: every member is a PEM string.
        guard !members.isEmpty, members.allSatisfy({ $0.value.string != nil }) else {
            throw FormatError(reason: "neither a JWKS ({\"keys\":[…]}), a JWK, nor a kid → PEM certificate map")
        }
        return fromCertificateMap(members.map { ($0.key, $0.value.string!) })
    }

    /// Reads a key document from text, as the byte form does.
    public static func parse(_ text: String) throws(FormatError) -> JWKSet { try parse(Array(text.utf8)) }

    /// Builds a set from parsed JWK objects.
    public static func fromJWKs(_ jwks: [JSONTree]) -> JWKSet {
        var keys: [PublicKey] = []
        var rejected: [RejectedKey] = []
        for jwk in jwks {
            do throws(KeyError) {
                keys.append(try JWK.publicKey(from: jwk))
            } catch {
                rejected.append(RejectedKey(kid: jwk["kid"]?.string, reason: error.reason))
            }
        }
        return JWKSet(keys: keys, rejected: rejected)
    }

    /// Builds a set from a kid → PEM certificate (or public key) map, binding each key to RS256 by default.
    public static func fromCertificateMap(_ entries: [(kid: String, pem: String)], algorithm: JWSAlgorithm? = nil) -> JWKSet {
        var keys: [PublicKey] = []
        var rejected: [RejectedKey] = []
        for (kid, pem) in entries {
            do throws(KeyError) {
                keys.append(try PublicKey(pem: pem, algorithm: algorithm, kid: kid))
            } catch {
                rejected.append(RejectedKey(kid: kid, reason: error.reason))
            }
        }
        return JWKSet(keys: keys, rejected: rejected)
    }
}

/// JSON Web Key (RFC 7517) import for the public keys a verifier needs.
public enum JWK {
    /// A verification key from one JWK object.
    public static func publicKey(from jwk: JSONTree) throws(KeyError) -> PublicKey {
        guard jwk.objectMembers != nil else { throw KeyError("a JWK must be a JSON object") }
        let kid: String?
        switch jwk["kid"] {
        case nil: kid = nil
        case .string(let s)?: kid = s
        default: throw KeyError("\"kid\" must be a string")
        }
        // The kind of key is checked first, so that the reason names what is wrong with the key itself: an HMAC
        // key is refused for being symmetric, not for its "alg":"HS256" being unknown here.
        guard let kty = jwk["kty"]?.string else { throw KeyError("\"kty\" is missing") }
        if kty == "oct" { throw KeyError("symmetric keys are never used to verify ID tokens") }
        if jwk["d"] != nil || jwk["p"] != nil || jwk["k"] != nil {
            // Private or symmetric material in a published key set is a publishing mistake; never use it.
            throw KeyError("the JWK holds private or symmetric key material")
        }
        if let use = jwk["use"] {
            guard use.string == "sig" else { throw KeyError("\"use\" is \(use.string.map { "\"\($0)\"" } ?? "not a string"), not \"sig\"") }
        }
        if let ops = jwk["key_ops"] {
            guard let list = ops.array, list.contains(.string("verify")) else {
                throw KeyError("\"key_ops\" does not allow \"verify\"")
            }
        }
        var algorithm: JWSAlgorithm?
        if let alg = jwk["alg"] {
            guard let name = alg.string else { throw KeyError("\"alg\" must be a string") }
            guard let known = JWSAlgorithm(rawValue: name) else { throw KeyError("unsupported \"alg\" \"\(name)\"") }
            algorithm = known
        }
        switch kty {
        case "RSA":
            guard let n = jwk["n"]?.string, let modulus = Base64URL.decode(n) else { throw KeyError("\"n\" is missing or not base64url") }
            guard let e = jwk["e"]?.string, let exponent = Base64URL.decode(e) else { throw KeyError("\"e\" is missing or not base64url") }
            let alg = algorithm ?? .rs256
            guard alg.keyType == .rsa else { throw KeyError("\"alg\" \(alg.rawValue) does not fit an RSA key") }
            return try PublicKey(rsaModulus: modulus, exponent: exponent, algorithm: alg, kid: kid)
        case "EC":
            guard let crvName = jwk["crv"]?.string else { throw KeyError("\"crv\" is missing") }
            guard let curve = Curve(rawValue: crvName) else { throw KeyError("unsupported curve \"\(crvName)\"") }
            guard let xs = jwk["x"]?.string, let x = Base64URL.decode(xs) else { throw KeyError("\"x\" is missing or not base64url") }
            guard let ys = jwk["y"]?.string, let y = Base64URL.decode(ys) else { throw KeyError("\"y\" is missing or not base64url") }
            if let alg = algorithm, alg.keyType != .ec(curve) {
                throw KeyError("\"alg\" \(alg.rawValue) does not fit a \(curve.rawValue) key")
            }
            return try PublicKey(curve: curve, x: x, y: y, kid: kid)
        default:
            throw KeyError("unsupported \"kty\" \"\(kty)\"")
        }
    }
}
