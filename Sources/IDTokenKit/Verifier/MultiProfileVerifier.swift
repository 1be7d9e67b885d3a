import Foundation

/// Verifies tokens from several providers — Firebase, Sign in with Apple, Facebook, any OpenID Connect issuer —
/// each against its own profile and keys: the one place where a token's way is decided (DESIGN §14).
///
/// ```swift
/// let verifier = try MultiProfileVerifier(profiles: [.firebase(projectID: "my-app"), .apple(clientIDs: ["com.example.app"])])
/// let outcome = await verifier.verify(idToken, now: .now)   // a ProfileVerification
/// ```
///
/// A token goes to the profile named by the caller, or else to the one whose issuers include the token's `iss`,
/// read unverified: it only chooses the profile, whose ``IDTokenVerifier`` then checks everything, the issuer
/// included. The payload read for routing is the one that verifier checks once the signature verifies, so that a
/// token is split and its payload read once whatever the routing. With one profile nothing is routed: a foreign
/// issuer is that profile's `wrong_issuer`; with several, an issuer that no profile accepts is `wrong_issuer` too.
///
/// Each profile's verifier keeps its own key source, verified-token cache and replay cache: a token seen before is
/// answered from its profile's cache; an unknown `kid` asks that profile's source once (cooldown-limited); the
/// replay cache comes last. A key refresh that leaves a profile's keys as they were (same `kid`s, same keys)
/// keeps its key set, and so its cached tokens (``HTTPKeySource``); a refresh of one profile's keys never
/// touches another's.
///
/// ``verify(_:now:nonce:profile:)`` suspends only to wait for a key fetch or an asynchronous replay cache;
/// ``evaluate(_:at:nonce:profile:)`` never suspends, for batch work against fixed key sets (``StaticKeySource``)
/// and a synchronous replay cache, if any.
public struct MultiProfileVerifier: Sendable {
    /// One profile with its name and verifier.
    public struct Member: Sendable {
        /// How answers and reports name the profile: unique in one verifier.
        public let name: String
        /// The profile's verifier, with its key source, replay cache and verified-token cache.
        public let verifier: IDTokenVerifier

        /// A member named `name`, or after its provider (`firebase`, `apple`…) when `name` is nil.
        public init(name: String? = nil, verifier: IDTokenVerifier) {
            self.name = name ?? verifier.profile.provider.rawValue
            self.verifier = verifier
        }
    }

    /// The profiles, in the order given.
    public var members: [Member] { storage.members }
    /// How a nonce without a mode of its own is compared when the caller chose (`--nonce` hashes, `--nonce-exact`
    /// does not); nil: as each profile's provider carries it (``Profile/nonceMode``).
    public var nonceMode: Nonce.Mode? { storage.nonceMode }
    /// Everything the verifier holds, behind one reference: a copy of the verifier (a door holding it, a call
    /// reading it from a class) costs one retain, not one per table.
    private let storage: Storage

    private final class Storage: Sendable {
        let members: [Member]
        let nonceMode: Nonce.Mode?
        /// The members as a token's way uses them.
        let routes: [Route]
        /// Each issuer's members: one, or several of different kinds (``ProviderDefinition/kindOfToken``).
        let byIssuer: [String: [Int]]
        /// The issuers' UTF-8 bytes and their members: a token's `iss` is matched in place, without a `String`.
        let issuers: [IssuerEntry]
        /// The members that accept every tenant of a multi-tenant issuer, by its shape (``IssuerRule/patterns``):
        /// asked when no member has the token's issuer itself.
        let patterns: [(pattern: IssuerRule.TenantPattern, member: Int)]
        let byName: [String: Int]
        /// The largest of the profiles' limits: the split that routing reads the issuer from.
        let routingLimits: JWSLimits
        /// Whether some profile keeps a verified-token cache, which stores the text of the tokens it verifies.
        let anyCache: Bool

        init(members: [Member], nonceMode: Nonce.Mode?, byIssuer: [String: [Int]], byName: [String: Int], routingLimits: JWSLimits) {
            self.members = members
            self.nonceMode = nonceMode
            self.routes = members.map(Route.init)
            self.byIssuer = byIssuer
            self.issuers = byIssuer.map { issuer, indexes in
                // Members that share an issuer have each a kind of token (checked when the verifier was built).
                IssuerEntry(bytes: Array(issuer.utf8), member: indexes[0],
                            shared: indexes.count == 1 ? [] : indexes.map { ($0, members[$0].verifier.profile.provider.definition.kindOfToken!) })
            }
            self.byName = byName
            self.routingLimits = routingLimits
            self.anyCache = routes.contains { $0.cache != nil }
            self.patterns = members.indices.flatMap { index in members[index].verifier.profile.issuer.patterns.map { ($0, index) } }
        }
    }

    private struct IssuerEntry: Sendable {
        let bytes: [UInt8]
        /// The issuer's member, or the first of those that share it.
        let member: Int
        /// When several members share the issuer: each, with what tells its tokens apart; empty otherwise.
        let shared: [(member: Int, isItsKind: @Sendable (JSONObject) -> Bool)]
    }

    private var routes: [Route] { storage.routes }
    private var byIssuer: [String: [Int]] { storage.byIssuer }
    private var byName: [String: Int] { storage.byName }
    private var routingLimits: JWSLimits { storage.routingLimits }

    /// A verifier over `members`.
    /// - Parameters:
    ///   - members: the profiles with their names and verifiers; each issuer may belong to one of them.
    ///   - nonceMode: compare a nonce without a mode of its own this way; nil: as each profile says.
    /// - Throws: ``ConfigurationError`` when there is no member, two share a name, or two accept the same issuer
    ///   and nothing in a token says which of them it is for (``ProviderDefinition/kindOfToken``: `apple` and
    ///   `apple-notification` share Apple's issuer, and a notification carries `events`).
    public init(_ members: [Member], nonceMode: Nonce.Mode? = nil) throws(ConfigurationError) {
        guard !members.isEmpty else { throw ConfigurationError("a verifier needs at least one profile") }
        var byIssuer: [String: [Int]] = [:]
        var byName: [String: Int] = [:]
        for (index, member) in members.enumerated() {
            if byName.updateValue(index, forKey: member.name) != nil {
                throw ConfigurationError("two profiles are named \"\(member.name)\"; give each a distinct name")
            }
            let provider = member.verifier.profile.provider
            for issuer in member.verifier.profile.issuers {
                for other in byIssuer[issuer] ?? [] {
                    let otherProvider = members[other].verifier.profile.provider
                    guard provider != otherProvider, provider.definition.kindOfToken != nil, otherProvider.definition.kindOfToken != nil else {
                        throw ConfigurationError("profiles \"\(members[other].name)\" and \"\(member.name)\" both accept the issuer \(issuer), and nothing in a token says which of them it is for; each issuer may have one profile of each kind of token (apple and apple-notification share Apple's)")
                    }
                }
                byIssuer[issuer, default: []].append(index)
            }
            for pattern in member.verifier.profile.issuer.patterns {
                if let other = members[..<index].firstIndex(where: { $0.verifier.profile.issuer.patterns.contains(pattern) }) {
                    throw ConfigurationError("profiles \"\(members[other].name)\" and \"\(member.name)\" both accept every issuer \(pattern.description); each may have one profile (list the tenants of each instead)")
                }
            }
        }
        storage = Storage(members: members, nonceMode: nonceMode, byIssuer: byIssuer, byName: byName,
                          routingLimits: JWSLimits(maxTokenBytes: members.map(\.verifier.profile.limits.maxTokenBytes).max()!,
                                                   maxDepth: members.map(\.verifier.profile.limits.maxDepth).max()!))
    }

    /// The same routes, with `verifier` for each member's verifier.
    private init(_ other: MultiProfileVerifier, verifier: (IDTokenVerifier) -> IDTokenVerifier) {
        let source = other.storage
        storage = Storage(members: source.members.map { Member(name: $0.name, verifier: verifier($0.verifier)) },
                          nonceMode: source.nonceMode, byIssuer: source.byIssuer, byName: source.byName,
                          routingLimits: source.routingLimits)
    }

    /// A verifier that judges every token as this one does, each member's verifier replaced by its replica
    /// (``IDTokenVerifier/replica()``) and the routes built again: for a thread that verifies apart from the others,
    /// so that the reference counts it changes on every token are not another core's.
    package func replica() -> MultiProfileVerifier { MultiProfileVerifier(self) { $0.replica() } }

    /// These members without their replay caches: a delivery reserves its token in the cache itself.
    package var withoutReplayCaches: MultiProfileVerifier { MultiProfileVerifier(self) { $0.withoutReplayCache } }

    /// A verifier over one profile's `verifier`, named `name` or after its provider: it answers as that verifier
    /// does, with nothing to route.
    /// - Parameters:
    ///   - verifier: the profile's verifier.
    ///   - name: how outcomes name the profile; nil: after its provider.
    public init(_ verifier: IDTokenVerifier, name: String? = nil) {
        let member = Member(name: name, verifier: verifier)
        storage = Storage(members: [member], nonceMode: nil,
                          byIssuer: Dictionary(verifier.profile.issuers.map { ($0, [0]) }, uniquingKeysWith: { first, _ in first }),
                          byName: [member.name: 0], routingLimits: verifier.profile.limits)
    }

    /// A verifier for `profiles`, each with keys fetched over HTTPS from its provider's keys URL
    /// (``HTTPKeySource``), named after their providers.
    /// - Parameters:
    ///   - profiles: the profiles, one per provider (or issuer set); each member is named after its provider.
    ///   - cache: keep up to this many verified tokens per profile (ignored with a replay cache).
    ///   - replayCache: accept each token once, whichever profile it is for.
    /// - Throws: ``ConfigurationError`` when a profile has no keys URL (an OIDC profile without `jwksURL`), two
    ///   profiles share a provider or an issuer, or a profile cannot be used.
    public init(profiles: [Profile], cache: VerifiedTokenCache.Configuration? = nil,
                replayCache: (any ReplayCache)? = nil) throws(ConfigurationError) {
        var members: [Member] = []
        for profile in profiles {
            guard let url = profile.keysURL else {
                throw ConfigurationError("the \(profile.provider.rawValue) profile has no keys URL; give it a jwksURL, or build its member with a key source")
            }
            let source: HTTPKeySource
            do { source = try HTTPKeySource(url: url) } catch { throw ConfigurationError("\(url): \(error)") }
            members.append(Member(verifier: try IDTokenVerifier(profile: profile, keys: source, replayCache: replayCache, cache: cache)))
        }
        try self.init(members)
    }

    /// The member for a token from `issuer` (the `iss` claim's unescaped UTF-8 bytes) with `claims`: the member
    /// of that issuer — where members share it, the one whose kind of token it is —, else the member that accepts
    /// every issuer of its shape.
    private func member(issuedBy issuer: UnsafeBufferPointer<UInt8>, claims: JSONObject) -> Int? {
        let actual = UnsafeRawBufferPointer(issuer)
        for entry in storage.issuers where entry.bytes.count == actual.count {
            guard entry.bytes.withUnsafeBytes({ ByteSearch.equal($0, actual) }) else { continue }
            guard !entry.shared.isEmpty else { return entry.member }
            return entry.shared.first { $0.isItsKind(claims) }?.member ?? entry.member
        }
        return storage.patterns.first { $0.pattern.matches(issuer) }?.member
    }

    /// The member named `name`.
    public func member(named name: String) -> Member? { byName[name].map { members[$0] } }

    // MARK: Verifying

    /// Verifies `token` as of `now`: routed to `profile` when given (a name of ``members``), else by its issuer;
    /// waits only for a key fetch or an asynchronous replay cache.
    /// - Parameters:
    ///   - token: the compact JWS as received (without `Bearer `).
    ///   - now: the time of verification.
    ///   - nonce: the nonce the sign-in flow used; one without a mode is compared as ``nonceMode`` or, when that is
    ///     nil, as the deciding profile says.
    ///   - profile: the name of the member that must verify the token; nil: the one the token's issuer names.
    /// - Returns: the outcome; a refusal is ``ProfileVerification/error``, never thrown.
    public func verify(_ token: String, now: Date, nonce: Nonce? = nil, profile: String? = nil) async -> ProfileVerification {
        await step(token, now: now.timeIntervalSince1970, nonce: nonce, profile: profile, reportsRefusals: true).value()
    }

    /// Verifies `token` as of `at` with each profile's current key set, without suspending: for batch work such as
    /// audits, whose profiles have fixed key sets. Nothing is fetched: an unknown `kid` is `unknown_key`, a profile
    /// without a usable set `keys_unavailable`; a replay cache must be a ``SynchronousReplayCache``.
    /// - Parameters:
    ///   - token: the compact JWS as received.
    ///   - at: the time of verification, in Unix seconds.
    ///   - nonce: the nonce the sign-in flow used, as for ``verify(_:now:nonce:profile:)``.
    ///   - profile: the name of the member that must verify the token; nil: the one the token's issuer names.
    public func evaluate(_ token: String, at: Double, nonce: Nonce? = nil, profile: String? = nil) -> ProfileVerification {
        step(token, now: at, nonce: nonce, profile: profile, reportsRefusals: true).now()
    }

    /// One token of a batch, with what ``evaluate(_:at:nonce:profile:)`` takes for it.
    public struct BatchEntry: Sendable {
        /// The compact JWS as received.
        public var token: String
        /// The time of verification, in Unix seconds.
        public var at: Double
        /// The nonce the sign-in flow used, if any.
        public var nonce: Nonce?
        /// The name of the member that must verify the token; nil: the one its issuer names.
        public var profile: String?

        /// A token to verify at `at` (Unix seconds), with the sign-in flow's nonce and the member that must verify
        /// it, if any.
        public init(token: String, at: Double, nonce: Nonce? = nil, profile: String? = nil) {
            self.token = token
            self.at = at
            self.nonce = nonce
            self.profile = profile
        }
    }

    /// Verifies `entries` without suspending, one outcome each, in order: each exactly as
    /// ``evaluate(_:at:nonce:profile:)`` verifies it, with the signatures checked together (DESIGN §13). RS256
    /// signatures under RSA-2048 keys go eight at a time through the AVX-512 IFMA kernel when the CPU has it,
    /// compared in full with their PKCS#1 v1.5 encoding, and any the kernel refuses is checked again by libcrypto
    /// before it is reported bad; every other signature (other algorithms and key sizes, and every one on a CPU
    /// without IFMA) is libcrypto's single check.
    public func evaluate(batch entries: [BatchEntry]) -> [ProfileVerification] {
        evaluate(batch: entries, signatures: SignatureBatch())
    }

    /// ``evaluate(batch:)`` with the caller's ``SignatureBatch`` (a worker thread keeps one).
    package func evaluate(batch entries: [BatchEntry], signatures: SignatureBatch) -> [ProfileVerification] {
        var outcomes = [ProfileVerification?](repeating: nil, count: entries.count)
        evaluate(batch: entries, signatures: signatures) { outcomes[$0] = $1 }
        return outcomes.map { $0! }
    }

    /// ``evaluate(batch:)`` handing each outcome to `body` with its entry's index as soon as it is known (tokens
    /// refused before their signature first, the others as their lanes complete), so that a caller that keeps its
    /// own per-token state (the audit) copies no array of outcomes.
    package func evaluate(batch entries: [BatchEntry], signatures: SignatureBatch, _ body: (Int, consuming ProfileVerification) -> Void) {
        // Entries are read in place, through their buffer: a copy of one retains and releases each of its references.
        entries.withUnsafeBufferPointer { entries in
            evaluate(count: entries.count, signatures: signatures, prepared: { index in
                prepare(entries[index].token, now: entries[index].at, nonce: entries[index].nonce,
                        profile: entries[index].profile, reportsRefusals: true)
            }, body)
        }
    }

    /// ``evaluate(batch:)`` over `count` tokens that the caller holds in its own columns (the audit's workers: each
    /// token a slice of its record's line, lent as ``TokenBytes``), each taken up to its signature by `prepared` (a call of
    /// ``prepare(_:now:nonce:profile:reportsRefusals:)`` with `reportsRefusals`), its outcome handed to `body` with
    /// its index.
    package func evaluate(count: Int, signatures: SignatureBatch, prepared: (Int) -> Prepared,
                          _ body: (Int, consuming ProfileVerification) -> Void) {
        // The tokens waiting for their signatures, in memory of their own: each is lent to the batch where it lies
        // and moved out for its verdict, which the batch gives once for each token after it has last lent it. An
        // array would lend a copy of each (its closures cannot prove nothing writes the array meanwhile) and then
        // destroy every element again through the type's value witness.
        let tokens = UnsafeMutablePointer<PendingToken>.allocate(capacity: count)
        let indexes = UnsafeMutablePointer<Int>.allocate(capacity: count)
        defer {
            tokens.deallocate()
            indexes.deallocate()
        }
        var waiting = 0
        for index in 0..<count {
            switch prepared(index) {
            case .decided(.done(let outcome)), .decided(.waiting(let outcome, _)): body(index, outcome)
            case .signature(let token):
                (tokens + waiting).initialize(to: token)
                indexes[waiting] = index
                waiting += 1
            }
        }
        var moved = 0
        signatures.verify(count: waiting, entry: { k, use in PendingToken.withSignatureInput(of: tokens + k, use) }) { k, valid in
            moved += 1
            // Switched on in place: `now()` would copy the outcome out of the step.
            switch (tokens + k).move().finish(signatureValid: valid) {
            case .done(let outcome), .waiting(let outcome, _): body(indexes[k], outcome)
            }
        }
        // SignatureBatch.verify gives every token its verdict exactly once: none is left to deinitialize.
        precondition(moved == waiting, "a token of the batch was given no signature verdict")
    }

    /// How far a token got without waiting.
    package typealias Step = VerificationStep<ProfileVerification>

    /// A token's way up to where it must wait: for services that answer at once what needs no waiting (a cached key,
    /// no asynchronous store to ask) and wait only for the rest.
    /// - Parameter reportsRefusals: read the payload of a token refused before its signature, for reports.
    package func step<Token: TokenText>(_ token: Token, now: Double, nonce given: Nonce?, profile name: String?,
                                        reportsRefusals: Bool) -> Step {
        switch prepare(token, now: now, nonce: given, profile: name, reportsRefusals: reportsRefusals) {
        case .decided(let step): return step
        case .signature(let pending): return pending.finish(signatureValid: pending.verifySignature())
        }
    }

    /// A routed token whose signature is all that is left to check before its profile's claims: its profile's
    /// pending signature (which carries the payload routing read, if it did), and the route that maps the outcome.
    package struct PendingToken: Sendable {
        fileprivate let route: Route
        fileprivate let pending: IDTokenVerifier.PendingSignature

        /// The split token (a copy: ``withSignatureInput(of:_:)`` lends it to a batch where it lies).
        package var jws: CompactJWS { pending.jws }

        /// Lends `body` the split token and the key its header chose (checked against the profile's algorithms)
        /// where they lie in memory the caller holds, read through the pointer: a method called on `pointer.pointee`
        /// would get a copy, as `body` could write there, and a copy retains and releases each of the token's references.
        @inline(__always)
        package static func withSignatureInput<R>(of token: UnsafePointer<PendingToken>,
                                                  _ body: (borrowing CompactJWS, borrowing PublicKey) -> R) -> R {
            body(token.pointer(to: \.pending.jws)!.pointee, token.pointer(to: \.pending.key)!.pointee)
        }

        /// Whether the signature verifies with the key its header chose, by libcrypto (``CompactJWS/verifySignature(with:)``).
        @inline(__always)
        package func verifySignature() -> Bool { pending.jws.verifySignature(with: pending.key) }

        /// The rest of the way, given the signature's verdict.
        package consuming func finish(signatureValid: Bool) -> Step {
            route.finish(pending, signatureValid: signatureValid)
        }
    }

    /// Where ``prepare(_:now:nonce:profile:reportsRefusals:)`` left a token.
    package typealias Prepared = PreparedToken<PendingToken, ProfileVerification>

    /// A token's way up to its signature: the profile (named, or routed by issuer), the profile's verified-token
    /// cache, the split, the key set and the key. Every door's way, whether the signatures are then checked one at
    /// a time (``step(_:now:nonce:profile:reportsRefusals:)``) or together (``evaluate(batch:)``).
    /// - Parameter token: its text, or bytes the caller lends for the call (``TokenText``).
    package func prepare<Token: TokenText>(_ token: Token, now: Double, nonce given: Nonce?, profile name: String?,
                                           reportsRefusals: Bool) -> Prepared {
        let chosen: Int?
        if let name {
            guard let index = byName[name] else {
                return .decided(.done(ProfileVerification(error: TokenError(.wrongIssuer, "no profile is named \"\(String(name.prefix(200)))\" (profiles: \(members.map(\.name).joined(separator: ", ")))"),
                                                 signatureVerified: false, splitHeader: nil, claims: nil, leeway: 0, profile: nil)))
            }
            chosen = index
        } else {
            chosen = routes.count == 1 ? 0 : nil
        }
        let nonce = given.map { $0.mode == nil ? Nonce($0.value, mode: nonceMode) : $0 }
        // A token a profile verified before is answered from that profile's cache before anything is split; an issuer
        // and a kind of token belong to one profile, so routing would have chosen the profile that holds it.
        if let chosen {
            let route = routes[chosen]
            if let hit = route.cachedToken(token, now: now, nonce: nonce) { return .decided(.done(route.accepted(hit))) }
            let jws: CompactJWS
            do { jws = try Self.split(token, limits: route.limits, forCache: route.cache != nil) } catch {
                return .decided(.done(unsplit(error, token, limits: route.limits, leeway: route.leeway, profile: route.name)))
            }
            return route.prepare(consume jws, now: now, nonce: nonce, claims: nil, reportsRefusals: reportsRefusals)
        }
        for route in routes {
            if let hit = route.cachedToken(token, now: now, nonce: nonce) { return .decided(.done(route.accepted(hit))) }
        }
        let jws: CompactJWS
        let claims: JSONObject
        do throws(TokenError) {
            jws = try Self.split(token, limits: routingLimits, forCache: storage.anyCache)
            claims = try jws.claims(maxDepth: routingLimits.maxDepth)
        } catch {
            return .decided(.done(unsplit(error, token, limits: routingLimits, leeway: 0, profile: nil)))
        }
        guard let index = claims.withString(ClaimKey.iss, { member(issuedBy: $0, claims: claims) }) ?? nil else {
            let shown = claims["iss"].map { $0.string.map { "\"\(String($0.prefix(200)))\"" } ?? "a \($0.kind)" } ?? "no issuer"
            let known = (byIssuer.keys.sorted() + storage.patterns.map(\.pattern.description)).joined(separator: ", ")
            return .decided(.done(ProfileVerification(error: TokenError(.wrongIssuer, claim: "iss", "no profile accepts tokens from \(shown) (configured issuers: \(known))"),
                                             signatureVerified: false, splitHeader: jws.header, claims: claims, leeway: 0,
                                             profile: nil, payloadRange: jws.payloadRange)))
        }
        let route = routes[index]
        guard route.limits == routingLimits else {
            // A profile with tighter limits than another's splits the token under its own.
            let own: CompactJWS
            do { own = try Self.split(token, limits: route.limits, forCache: route.cache != nil) } catch {
                return .decided(.done(ProfileVerification(error: error, signatureVerified: false, splitHeader: jws.header, claims: claims,
                                                 leeway: route.leeway, profile: route.name, payloadRange: jws.payloadRange)))
            }
            return route.prepare(consume own, now: now, nonce: nonce, claims: nil, reportsRefusals: reportsRefusals)
        }
        return route.prepare(consume jws, now: now, nonce: nonce, claims: claims, reportsRefusals: reportsRefusals)
    }

    /// `token` split under `limits`. A token lent as bytes is split from its text when a verified-token cache may keep
    /// the token: the cache stores that text, so one string is made, not a copy of the bytes in the split and a
    /// string made from the copy afterwards. (Without a cache, as in the audit, no string is made at all.) The door that
    /// lends bytes to a verifier with a cache, `idtoken serve`'s HTTP connection, lends visible ASCII only, whose text
    /// is the same bytes.
    @inline(__always)
    private static func split<Token: TokenText>(_ token: Token, limits: JWSLimits, forCache: Bool) throws(TokenError) -> CompactJWS {
        forCache ? try token.text.split(limits: limits) : try token.split(limits: limits)
    }

    /// A token that could not be split: its header and payload as far as they read, for the report.
    private func unsplit<Token: TokenText>(_ error: TokenError, _ token: Token, limits: JWSLimits, leeway: Double, profile: String?) -> ProfileVerification {
        let peek = UnverifiedPeek.parts(token.text, maxBytes: limits.maxTokenBytes)
        return ProfileVerification(error: error, signatureVerified: false, header: peek.header, claims: peek.claims,
                                   leeway: leeway, profile: profile)
    }

    // MARK: Keys

    /// Asks every profile's key source that has no usable set for one (each source shares one fetch between its
    /// callers and spaces retries after a failure): a service calls this every few seconds until it is ready.
    public func fetchMissingKeys() async {
        for member in members where member.verifier.keySource.currentKeys() == nil {
            _ = try? await member.verifier.keySource.keys(refreshingFor: nil)
        }
    }

    /// The names of the profiles whose key source has no usable set; empty when every profile can verify.
    public var profilesWithoutKeys: [String] {
        members.filter { $0.verifier.keySource.currentKeys() == nil }.map(\.name)
    }

    /// One member as a token's way uses it, with what each token reads of its policy worked out once.
    fileprivate final class Route: Sendable {
        let name: String
        let verifier: IDTokenVerifier
        let leeway: Double
        let limits: JWSLimits
        /// The verifier's verified-token cache and key source, asked before anything is split.
        let cache: VerifiedTokenCache?
        let keySource: any KeySource
        let nonceMode: Nonce.Mode?

        init(_ member: Member) {
            name = member.name
            verifier = member.verifier
            leeway = Double(member.verifier.profile.leeway.seconds)
            limits = member.verifier.profile.limits
            cache = member.verifier.verifiedTokenCache
            keySource = member.verifier.keySource
            nonceMode = member.verifier.profile.nonceMode
        }

        @inline(__always)
        func cachedToken<Token: TokenText>(_ token: Token, now: Double, nonce: Nonce?) -> VerifiedToken? {
            // Nothing is loaded for a verifier without a cache (the audit's: it keeps verdicts itself), and a token
            // lent as bytes is looked up by them: no text is made of it.
            guard cache != nil else { return nil }
            return IDTokenVerifier.cachedToken(token, in: cache, keys: nil, keySource: keySource, now: now, nonce: nonce?.resolved(nonceMode))
        }

        func accepted(_ verified: consuming VerifiedToken) -> ProfileVerification {
            ProfileVerification(accepted: verified, leeway: leeway, profile: name)
        }

        /// The split token is moved on into the pending signature (a copy would retain and release its references).
        func prepare(_ jws: consuming CompactJWS, now: Double, nonce: Nonce?, claims: JSONObject?, reportsRefusals: Bool) -> Prepared {
            let resolved = nonce?.resolved(verifier.profile.nonceMode)
            let payload = jws.payloadRange
            switch verifier.prepare(jws, now: now, nonce: resolved, claims: claims, reportsRefusals: reportsRefusals) {
            case .decided(let step):
                return .decided(mapped(step, payload: payload, routingClaims: claims))
            case .signature(let pending):
                return .signature(PendingToken(route: self, pending: pending))
            }
        }

        func finish(_ pending: IDTokenVerifier.PendingSignature, signatureValid: Bool) -> Step {
            mapped(verifier.finish(pending, signatureValid: signatureValid), payload: pending.jws.payloadRange,
                   routingClaims: pending.claims)
        }

        private func mapped(_ step: consuming IDTokenVerifier.Step, payload: Range<Int>, routingClaims claims: JSONObject?) -> Step {
            switch consume step {
            case .done(let outcome):
                return .done(verdict(outcome, payload: payload, routingClaims: claims))
            case .waiting(let without, let rest):
                return .waiting(without: verdict(without, payload: payload, routingClaims: claims)) { [self] in
                    verdict(await rest(), payload: payload, routingClaims: claims)
                }
            }
        }

        /// The outcome as the verdict of this member. The outcome is consumed: its token, header and claims move
        /// into the verdict (a copy would retain and release each of their references).
        private func verdict(_ outcome: consuming IDTokenVerifier.Outcome, payload: Range<Int>, routingClaims: JSONObject?) -> ProfileVerification {
            let window = outcome.window
            let verification = (consume outcome).verification
            switch consume verification {
            case .accepted(let verified):
                // The verified token's payload range is the split's (`payload`).
                return ProfileVerification(accepted: verified, leeway: leeway, profile: name, window: window)
            case .refused(let error, let signatureVerified, let header, let claims):
                return ProfileVerification(error: error, signatureVerified: signatureVerified, splitHeader: header,
                                           claims: claims ?? routingClaims, leeway: leeway, profile: name, payloadRange: payload,
                                           window: window)
            }
        }
    }
}
