import Foundation
import IDTokenKit
import Synchronization
import TestSupport

/// Tokens signed for the run by keys made for the run (`TestSigner`, from the TestSupport target).
enum Mint {
    static let projectID = "idtk-cache-test"
    static let issuer = "https://securetoken.google.com/idtk-cache-test"
    /// 2026-01-01T00:00:00Z.
    static let t0: Double = 1_767_225_600

    static let rsa = TestSigner(.rs256, kid: "cache-rsa-1")
    static let otherRSA = TestSigner(.rs256, kid: "cache-rsa-2")
    /// ES256 signs in microseconds: for the tests that need hundreds of tokens.
    static let ec = TestSigner(.es256, kid: "cache-ec-1")

    /// A Firebase ID token for `uid`, issued at `t0`, valid for an hour, unless the arguments say otherwise.
    /// `extra` members are spliced into the claims as given (JSON text without braces).
    static func firebase(uid: String = "user-0001", iat: Double = t0, exp: Double? = nil, authTime: Double? = nil,
                         nbf: Double? = nil, extra: String? = nil, signer: TestSigner = rsa) -> String {
        var claims = [
            "\"iss\":\"\(issuer)\"", "\"aud\":\"\(projectID)\"", "\"sub\":\"\(uid)\"", "\"user_id\":\"\(uid)\"",
            "\"iat\":\(Int(iat))", "\"exp\":\(Int(exp ?? iat + 3600))", "\"auth_time\":\(Int(authTime ?? iat - 30))",
            "\"firebase\":{\"identities\":{},\"sign_in_provider\":\"apple.com\"}",
        ]
        if let nbf { claims.append("\"nbf\":\(Int(nbf))") }
        if let extra { claims.append(extra) }
        return signer.token(payload: "{" + claims.joined(separator: ",") + "}")
    }

    /// An OIDC token signed with ES256, with or without a `kid` in its header.
    static func oidc(uid: String, exp: Double = t0 + 3600, withKid: Bool = true) -> String {
        let payload = "{\"iss\":\"https://issuer.example.com\",\"aud\":\"cache-client\",\"sub\":\"\(uid)\",\"iat\":\(Int(t0)),\"exp\":\(Int(exp))}"
        guard !withKid else { return ec.token(payload: payload) }
        return ec.token(header: Array("{\"alg\":\"ES256\"}".utf8), payload: Array(payload.utf8))
    }

    static let oidcProfile = Profile.oidc(issuers: ["https://issuer.example.com"], audiences: ["cache-client"])

    static func at(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }
}

/// A rule that counts how often it runs: full verifications run every rule, cache hits only the rules that do
/// not depend on the claims alone, so the count tells a hit from a miss.
final class CountingRule: ClaimRule {
    let dependsOnlyOnClaims: Bool
    private let runs = Mutex(0)

    init(dependsOnlyOnClaims: Bool) { self.dependsOnlyOnClaims = dependsOnlyOnClaims }

    var count: Int { runs.withCriticalSection { $0 } }

    func check(_ claims: JSONObject, _ context: ClaimContext) throws(TokenError) {
        runs.withCriticalSection { $0 += 1 }
    }
}

extension Profile {
    /// This profile with `rule` appended.
    func adding(_ rule: any ClaimRule) -> Profile {
        var copy = self
        copy.rules.append(rule)
        return copy
    }
}

/// A key source whose current set the test replaces at will; asked to refresh, it returns the current set.
/// It does not implement `withCurrentKeys`, so it exercises the protocol's default.
final class SwappableKeySource: KeySource {
    private let current: Mutex<JWKSet?>

    init(_ keys: JWKSet?) { current = Mutex(keys) }

    func set(_ keys: JWKSet?) { current.withCriticalSection { $0 = keys } }

    func currentKeys() -> JWKSet? { current.withCriticalSection { $0 } }

    func keys(refreshingFor unknownKid: String?) async throws(TokenError) -> JWKSet {
        guard let keys = currentKeys() else { throw TokenError(.keysUnavailable, "the test key source has no keys") }
        return keys
    }
}

/// Revocation times the test changes while the verifier runs.
final class MutableRevocations: RevocationTimes {
    private let times = Mutex<[String: Date]>([:])

    func revoke(_ uid: String, at time: Date?) { times.withCriticalSection { $0[uid] = time } }

    func revocationTime(forUser uid: String) -> Date? { times.withCriticalSection { $0[uid] } }
}

/// A synchronous in-memory replay cache.
final class SetReplayCache: SynchronousReplayCache {
    private let entries = Mutex<Set<ReplayEntry>>([])

    func insertIfAbsentNow(_ entry: ReplayEntry, now: Int64) throws(TokenError) -> Bool {
        entries.withCriticalSection { $0.insert(entry).inserted }
    }
}

/// What a verification came to, comparable across verifiers: the claims as signed, or the error's code, claim
/// and message.
enum Verdict: Equatable, CustomStringConvertible {
    case valid(claims: String, header: String, algorithm: JWSAlgorithm)
    case invalid(TokenError.Code, claim: String?, message: String)

    init(_ body: () throws(TokenError) -> VerifiedToken) {
        do {
            let token = try body()
            self = .valid(claims: token.claims.rawJSON, header: token.header.object.rawJSON, algorithm: token.algorithm)
        } catch {
            self = .invalid(error.code, claim: error.claim, message: error.message)
        }
    }

    var code: TokenError.Code? {
        if case .invalid(let code, _, _) = self { return code }
        return nil
    }

    var description: String {
        switch self {
        case .valid(let claims, _, _): return "valid \(claims.prefix(60))…"
        case .invalid(let code, let claim, _): return "\(code.rawValue) (\(claim ?? "-"))"
        }
    }
}
