import IDTokenKit

/// The identity headers of an accepted token as this service sends them (DESIGN §10: `X-Auth-Subject` to
/// `X-Auth-Claims`), encoded, checked and laid out for both doors once: the HTTP door's header lines and the gRPC
/// door's `HeaderValueOption` fields. Made on the first answer to a token the verified-token cache holds, and kept in
/// the token's ``IDTokenKit/VerifiedTokenMemo`` as long as the cache holds it, so that a token seen before (what a
/// mesh mostly sees) is answered by copying bytes: no claim read, no encoding, no check of a header value again.
///
/// What varies from one answer to the next (`Cache-Control`'s `max-age`, `X-Auth-App-Id`) is not in it: those are
/// the answer's other headers. It takes about twice the identity headers' size (1–2 KB for a Firebase ID token) for
/// each token the cache holds.
final class IdentityAnswer: Sendable {
    /// The service that rendered it and the profile it was rendered for: a kept rendering is used only by them.
    let renderer: ObjectIdentifier
    let profile: String
    /// `Name: value\r\n` for each header whose value ``IdentityHeaders/isSafe(_:)`` passes (every value the rule
    /// encodes does), as the HTTP door writes them.
    let http: [UInt8]
    /// The `headers` fields of an `OkHttpResponse`, as the gRPC door writes them (``ExternalAuthorization``).
    let grpc: [UInt8]
    /// Which of ``ExternalAuthorization/identityHeaders`` the headers are, by index (the others are removed upstream).
    let grpcIdentities: UInt32
    /// The token's `exp` (``VerifiedToken/expiresAt``), which every answer's `max-age` counts down to: read from the
    /// claims once, not on every answer.
    let expiresAt: Double

    init(renderer: ObjectIdentifier, profile: String, headers: [(String, String)], expiresAt: Double) {
        self.renderer = renderer
        self.profile = profile
        self.expiresAt = expiresAt
        let safe = headers.filter { IdentityHeaders.isSafe($0.1) }
        var http: [UInt8] = []
        http.reserveCapacity(safe.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 })
        for (name, value) in safe {
            http.append(contentsOf: name.utf8)
            http.append(contentsOf: ": ".utf8)
            http.append(contentsOf: value.utf8)
            http.append(contentsOf: "\r\n".utf8)
        }
        self.http = http
        (grpc, grpcIdentities) = ExternalAuthorization.identityOptions(safe)
    }
}
