import Foundation
import FuzzDriver
@testable import IDTokenKit
// The batch path's package API (SignatureBatch, evaluate(batch:signatures:)).
@testable import JOSE

// Tokens through the whole verifier of every provider profile (the generated vectors' configurations and key
// sets), and claim sets through every profile's claim rules.
//
// The first input byte picks the mode:
// - even: the rest is a token, verified by every profile at its vectors' time, with and without a nonce;
// - odd: the rest is `header 0xFF payload [0xFF signature]` (0xFF never occurs in UTF-8, so JSON cannot hold
//   it), base64url-encoded into a token and verified like one; then the payload, which no signature could
//   reach, goes straight through each profile's claim checks, in the verifier's order, at a time picked by the
//   second byte.
//
// Besides "never crash", the checks are: a token accepted by a profile has exactly the signed part
// (`header.payload`) of a vector token, so the fuzzer never got a token past the signature that nobody signed;
// a verifier with a verified-token cache gives the same verdict as one without, at the vectors' time (twice, so
// that the second can be a cache hit) and a day later; the batch path (``MultiProfileVerifier/evaluate(batch:)``,
// the kernel's lanes computed in portable C, every lane through the kernel) gives the single path's verdict, the
// token alone and between two vector tokens of the profile, and so does the token lent as bytes (the audit's way);
// and every rejection comes with a message.

struct Setup {
    let profile: Profile
    let verifier: IDTokenVerifier
    /// The same verifier with a verified-token cache: it must answer every token exactly as `verifier` does.
    let cached: IDTokenVerifier
    /// The same verifier as a batch door.
    let multi: MultiProfileVerifier
    /// Two tokens of the profile's vectors, signed, to share the fuzzed token's batch.
    let companions: [String]
    let keys: JWKSet
    let now: Double
    let nonce: Nonce
}

func keySet(_ path: String) -> JWKSet {
    do { return try KeySetFile.parse(Fuzz.read(path), source: path).keys } catch { Fuzz.fail("\(path): \(error)") }
}

/// The time of the first valid case in a vector file, and a nonce from its cases.
func vectorTime(_ path: String) -> (Double, String) {
    guard let tree = try? JSONTree.parse(Fuzz.read(path)), let cases = tree["cases"]?.array else { Fuzz.fail("cannot read \(path)") }
    let valid = cases.first { $0["expect"]?["valid"]?.bool == true }
    let nonce = cases.lazy.compactMap { $0["nonce"]?["value"]?.string }.first ?? "nonce"
    return (valid?["at"]?.double ?? 1_767_225_600, nonce)
}

let setups: [Setup] = {
    let project = "idtk-demo-7f3a2"
    let configurations: [(Profile, String, String)] = [
        (.firebase(projectID: project), "Vectors/generated/keysets/firebase_jwks.json", "Vectors/generated/firebase.json"),
        (.firebase(projectID: project, tenant: "tenant-b7xusU", allowedSignInProviders: ["apple.com", "github.com"],
                   revocation: RevocationList(["BY1QG7VRikVaTWXSRk7zdtekwOCj": Date(timeIntervalSince1970: 1_767_225_300)])),
         "Vectors/generated/keysets/firebase_certificates.json", "Vectors/generated/firebase.json"),
        (.firebaseSessionCookie(projectID: project), "Vectors/generated/keysets/firebase_session_certificates.json",
         "Vectors/generated/firebase-session.json"),
        (.apple(clientIDs: ["com.example.idtk.ios", "com.example.idtk.web"]), "Vectors/generated/keysets/apple_jwks.json",
         "Vectors/generated/apple.json"),
        (.facebook(appID: "1234567890123456", extraIssuers: ["https://limited.facebook.com"]),
         "Vectors/generated/keysets/facebook_jwks.json", "Vectors/generated/facebook.json"),
        (.oidc(issuers: ["https://accounts.idtk.example"], audiences: ["idtk-client-ia3l8z"], algorithms: [.rs256, .es256]),
         "Vectors/generated/keysets/oidc_jwks.json", "Vectors/generated/oidc.json"),
    ]
    return configurations.map { profile, keysPath, vectorsPath in
        let keys = keySet(keysPath)
        let (now, nonce) = vectorTime(vectorsPath)
        do {
            let verifier = try IDTokenVerifier(profile: profile, keys: keys)
            let cached = try IDTokenVerifier(profile: profile, keys: keys, cache: .init(capacity: 64))
            let companions = ((try? JSONTree.parse(Fuzz.read(vectorsPath)))?["cases"]?.array ?? []).prefix(2).compactMap { $0["token"]?.string }
            return Setup(profile: profile, verifier: verifier, cached: cached, multi: MultiProfileVerifier(verifier),
                         companions: companions, keys: keys, now: now, nonce: .sha256Hex(nonce))
        } catch { Fuzz.fail("\(error)") }
    }
}()

/// The signed parts of every token in the vectors: the only ones that may ever be accepted.
let signedParts: Set<Substring> = {
    var parts: Set<Substring> = []
    for path in ["apple", "facebook", "firebase", "firebase-session", "oidc", "firebase-app-check", "apple-notification", "google", "github-actions", "cognito", "entra", "cognito-access"].map({ "Vectors/generated/\($0).json" })
        + ["Vectors/external/providers/cases.json"] {
        guard let cases = (try? JSONTree.parse(Fuzz.read(path)))?["cases"]?.array else { Fuzz.fail("cannot read \(path)") }
        for token in cases.compactMap({ $0["token"]?.string }) {
            if let dot = token.lastIndex(of: ".") { parts.insert(token[..<dot]) }
        }
    }
    return parts
}()

/// The verdict of `verifier`: nil when accepted, else the code.
func verdict(_ verifier: IDTokenVerifier, _ token: String, _ setup: Setup, at now: Double, nonce: Nonce?) -> TokenError.Code? {
    do {
        let verified = try verifier.verify(token, keys: setup.keys, now: Date(timeIntervalSince1970: now), nonce: nonce)
        guard let dot = token.lastIndex(of: "."), signedParts.contains(token[..<dot]) else {
            Fuzz.fail("\(setup.profile.provider) accepted a token nobody signed: \(token)")
        }
        touch(verified.claims)
        return nil
    } catch {
        if error.message.isEmpty { Fuzz.fail("\(error.code) without a message") }
        return error.code
    }
}

/// The batch path's signatures: the kernel's arithmetic in portable C (any CPU), every lane through it.
nonisolated(unsafe) let batchSignatures: SignatureBatch = {
    let batch = SignatureBatch(implementation: .portable)
    batch.minimumKernelLanes = 1
    return batch
}()

/// The batch path's verdict on `token`, alone and between the profile's companions, must be the single path's.
func checkBatch(_ token: String, _ setup: Setup, expected: TokenError.Code?) {
    let alone = [MultiProfileVerifier.BatchEntry(token: token, at: setup.now)]
    // Between the companions only when the token reached its signature (the companions' lanes cost time).
    let reached = expected.map { !beforeSignature.contains($0) || $0 == .badSignature } ?? true
    let shared = reached ? setup.companions.map { MultiProfileVerifier.BatchEntry(token: $0, at: setup.now) } : []
    let batches = [(alone, 0)] + (shared.isEmpty ? [] : [(Array(shared.prefix(1)) + alone + shared.dropFirst(), 1)])
    for (entries, index) in batches {
        let outcome = setup.multi.evaluate(batch: entries, signatures: batchSignatures)[index]
        if outcome.error?.code != expected {
            Fuzz.fail("\(setup.profile.provider): the batch says \(outcome.error?.code.rawValue ?? "valid"), the single path \(expected?.rawValue ?? "valid"): \(token)")
        }
    }
    // The token lent as bytes, as the audit's workers lend it (TokenBytes): the same verdict.
    var lent: ProfileVerification?
    Array(token.utf8).withUnsafeBytes { bytes in
        setup.multi.evaluate(count: 1, signatures: batchSignatures, prepared: { _ in
            setup.multi.prepare(TokenBytes(bytes), now: setup.now, nonce: nil, profile: nil, reportsRefusals: true)
        }) { _, outcome in lent = outcome }
    }
    if lent?.error?.code != expected {
        Fuzz.fail("\(setup.profile.provider): the token as bytes says \(lent?.error?.code.rawValue ?? "valid"), as text \(expected?.rawValue ?? "valid"): \(token)")
    }
}

/// The codes of the checks before the signature.
let beforeSignature: Set<TokenError.Code> = [.malformed, .tokenTooLarge, .algorithmNotAllowed, .unsupportedHeader, .unknownKey, .badSignature]

func verifyEverywhere(_ token: String) {
    for setup in setups {
        // The nonce is checked last, so only a token that passes everything else is worth a second run with one.
        for nonce in [nil, setup.nonce] {
            let plain = verdict(setup.verifier, token, setup, at: setup.now, nonce: nonce)
            if nonce == nil { checkBatch(token, setup, expected: plain) }
            // Only a token whose signature verified can be cached; for the others both verifiers run the same code.
            let signed = plain.map { !beforeSignature.contains($0) } ?? true
            // Twice through the cached verifier (the second may be a hit), and once more later, after `exp`.
            for now in signed ? [setup.now, setup.now, setup.now + 86_400] : [] {
                let expected = now == setup.now ? plain : verdict(setup.verifier, token, setup, at: now, nonce: nonce)
                let cached = verdict(setup.cached, token, setup, at: now, nonce: nonce)
                if cached != expected {
                    Fuzz.fail("\(setup.profile.provider): the cached verifier says \(cached?.rawValue ?? "valid"), the plain one \(expected?.rawValue ?? "valid"): \(token)")
                }
            }
            if plain != nil { break }
        }
    }
}

/// The claim checks of IDTokenVerifier, in its order, without the signature (see Verifier.swift, `check`).
func checkClaims(_ claims: JSONObject, _ setup: Setup, now: Double, nonce: Nonce?) throws(TokenError) {
    let profile = setup.profile
    let leeway = Double(profile.leeway.seconds)
    let tokenName = profile.provider.tokenName
    try profile.audience.check(claims, profile: profile)
    try profile.issuer.check(claims, profile: profile)
    _ = try profile.time.check(claims, now: now, leeway: leeway, tokenName: tokenName)
    let context = ClaimContext(now: now, leeway: leeway, tokenName: tokenName)
    for rule in profile.rules { try rule.check(claims, context) }
    if let nonce { try nonce.check(claims, tokenName: tokenName) }
}

/// Reads every typed accessor, as an application would after verification.
func touch(_ claims: Claims) {
    _ = (claims.issuer, claims.subject, claims.audience, claims.expiresAt, claims.notBefore, claims.issuedAt,
         claims.authTime, claims.nonce, claims.email, claims.emailVerified, claims.name, claims.picture, claims.jwtID)
    let firebase = FirebaseClaims(claims)
    _ = (firebase.uid, firebase.signInProvider, firebase.signInSecondFactor, firebase.secondFactorIdentifier,
         firebase.tenant, firebase.identities, firebase.emailVerified, firebase.phoneNumber, firebase.customClaimNames)
    let apple = AppleClaims(claims)
    _ = (apple.userID, apple.email)
    _ = FacebookClaims(claims)
    for key in claims.object.keys { _ = (claims.strings(key), claims.seconds(key), claims.int(key), claims.bool(key)) }
}

Fuzz.run { raw in
    guard raw.count >= 2 else { return }
    let mode = raw[0]
    let rest = raw.dropFirst()
    if mode % 2 == 0 {
        verifyEverywhere(String(decoding: rest, as: UTF8.self))
        return
    }
    let pieces = rest.dropFirst().split(separator: 0xFF, maxSplits: 2, omittingEmptySubsequences: false)
    let header = [UInt8](pieces[0])
    let payload = pieces.count > 1 ? [UInt8](pieces[1]) : []
    let signature = pieces.count > 2 ? [UInt8](pieces[2]) : [UInt8](repeating: 0x42, count: 256)
    verifyEverywhere(Base64URL.encode(header) + "." + Base64URL.encode(payload) + "." + Base64URL.encode(signature))

    // Around each profile's vector time: up to ±127 × 10 minutes.
    let offset = (Double(rest[rest.startIndex]) - 128) * 600
    for setup in setups {
        guard let claims = try? JSONObject.parse(payload, maxDepth: setup.profile.limits.maxDepth) else { continue }
        for nonce in [nil, setup.nonce] {
            do throws(TokenError) {
                try checkClaims(claims, setup, now: setup.now + offset, nonce: nonce)
            } catch {
                if error.message.isEmpty { Fuzz.fail("\(error.code) without a message") }
            }
        }
        touch(Claims(claims))
    }
}
