import Foundation
import IDTokenKit
import IDTokenKitVapor
import JWT
import Vapor

// One Vapor server, three ways to verify the same Firebase ID tokens on `GET /me` (BENCH_MODE), answering the
// token's subject; driven by bench/serve_bench.py --vapor-peer:
//   idtokenkit         IDTokenKitVapor: the authenticator and guard, keys loaded once (a static set); with
//                      BENCH_CACHE=N the verifier keeps N verified tokens (off by default, as in the library)
//   jwt-loaded         vapor/jwt 5.2 with the keys added once at start: req.jwt.verify(as: FirebaseAuthIdentityToken.self,
//                      expectedAudience:) plus the issuer check firebaseAuth makes
//   jwt-firebase-auth  vapor/jwt 5.2 as documented: req.jwt.firebaseAuth.verify(), which takes the JWKS from its
//                      endpoint cache and builds a key collection from it on every request; the endpoint is this
//                      server's own /jwks (max-age=3600), so after the first request no fetch is made
//   none               no verification: Vapor's own cost a request (the floor of the three above)
// BENCH_JWKS is the key set file, BENCH_PROJECT the Firebase project ID (by default the vectors').
let environment = ProcessInfo.processInfo.environment
let mode = environment["BENCH_MODE"] ?? "idtokenkit"
let jwksPath = environment["BENCH_JWKS"] ?? "Vectors/generated/keysets/firebase_jwks.json"
let projectID = environment["BENCH_PROJECT"] ?? "idtk-demo-7f3a2"
let cacheCapacity = Int(environment["BENCH_CACHE"] ?? "0") ?? 0
let jwks = try String(contentsOfFile: jwksPath, encoding: .utf8)

var env = try Environment.detect()
try LoggingSystem.bootstrap(from: &env)
let app = try await Application.make(env)
app.logger.logLevel = .error
app.get("jwks") { _ in
    Response(status: .ok, headers: ["Content-Type": "application/json", "Cache-Control": "public, max-age=3600"], body: .init(string: jwks))
}

switch mode {
case "idtokenkit":
    app.idTokens.use(try IDTokenVerifier(profile: .firebase(projectID: projectID), keys: try KeySetFile.load(jwksPath),
                                         cache: cacheCapacity > 0 ? VerifiedTokenCache.Configuration(capacity: cacheCapacity) : nil))
    app.grouped(app.idTokens.authenticator(), IDTokenGuardMiddleware()).get("me") { req in
        try req.auth.require(VerifiedToken.self).subject
    }
case "jwt-loaded":
    try await app.jwt.keys.add(jwksJSON: jwks)
    app.get("me") { req async throws -> String in
        let token = try await req.jwt.verify(as: FirebaseAuthIdentityToken.self, expectedAudience: projectID)
        guard token.issuer.value == "https://securetoken.google.com/\(projectID)" else {
            throw Abort(.unauthorized)
        }
        return token.subject.value
    }
case "jwt-firebase-auth":
    let port = environment["BENCH_PORT"] ?? "8080"
    app.jwt.firebaseAuth.jwksEndpoint = URI(string: "http://127.0.0.1:\(port)/jwks")
    app.jwt.firebaseAuth.applicationIdentifier = projectID
    app.get("me") { req async throws -> String in
        try await req.jwt.firebaseAuth.verify().subject.value
    }
case "none":
    // The framework's own cost: the same route answering a constant, the token not read.
    app.get("me") { _ in "bench-user" }
default:
    fatalError("BENCH_MODE must be idtokenkit, jwt-loaded, jwt-firebase-auth or none")
}

do {
    try await app.execute()
} catch {
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
