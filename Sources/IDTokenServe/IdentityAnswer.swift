import IDTokenKit

/// The identity headers of an accepted token as this service sends them (DESIGN §10: `X-Auth-Subject` to
/// `X-Auth-Claims`), encoded from the claims' bytes straight into the HTTP door's header lines, and laid out as the gRPC
/// door's `HeaderValueOption` fields from those. Made for every allow; for a token the verified-token cache holds,
/// made on its first answer (both layouts) and kept in the token's ``IDTokenKit/VerifiedTokenMemo`` as long as the
/// cache holds it, so that a token seen before (what a mesh mostly sees) is answered by copying bytes: no claim read,
/// no encoding, no check of a header value again.
///
/// What varies from one answer to the next (`Cache-Control`'s `max-age`, `X-Auth-App-Id`) is not in it: those are
/// the answer's other headers. It takes about twice the identity headers' size (1–2 KB for a Firebase ID token) for
/// each token the cache holds.
final class IdentityAnswer: Sendable {
    /// The service that rendered it and the profile it was rendered for: a kept rendering is used only by them.
    let renderer: ObjectIdentifier
    let profile: String
    /// `Name: value\r\n` for each identity header, every value encoded by the rule (``IdentityHeaders``), as the HTTP
    /// door writes them.
    let http: [UInt8]
    /// The `headers` fields of an `OkHttpResponse`, as the gRPC door writes them (``ExternalAuthorization``), and
    /// which of ``ExternalAuthorization/identityHeaders`` the headers are, by index (the others are removed upstream):
    /// laid out from ``http`` when the answer is kept, nil for an answer to one request (the gRPC door lays out its own).
    let grpc: (bytes: [UInt8], identities: UInt32)?
    /// The token's `exp` (``VerifiedToken/expiresAt``), which every answer's `max-age` counts down to: read from the
    /// claims once, not on every answer.
    let expiresAt: Double

    /// - Parameter laysOutGRPC: lay out the gRPC door's fields now (for an answer kept for the token's later
    ///   requests, whichever door they come through).
    init(renderer: ObjectIdentifier, profile: String, http: [UInt8], expiresAt: Double, laysOutGRPC: Bool) {
        self.renderer = renderer
        self.profile = profile
        self.expiresAt = expiresAt
        self.http = http
        grpc = laysOutGRPC ? ExternalAuthorization.identityOptions(http: http) : nil
    }

    /// The gRPC door's fields: the kept layout, or one made now from ``http``.
    var grpcLayout: (bytes: [UInt8], identities: UInt32) { grpc ?? ExternalAuthorization.identityOptions(http: http) }
}
