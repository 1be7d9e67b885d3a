import Foundation
import IDTokenKit
import Testing

/// Runs every case of `Vectors/generated/*.json` through the verifier and compares the verdict, the error code
/// and (when the case names one) the claim.
@Suite struct GeneratedVectorTests {
    /// One file a provider.
    static let files = Provider.allCases.map(\.rawValue)
    static let cases: [VectorCase] = files.flatMap { VectorCase.load("generated/\($0).json") }

    @Test func everyFileHasCasesAndEveryCodeIsCovered() throws {
        #expect(Self.cases.count >= 400)
        for name in Self.files {
            let doc = try VectorFiles.json("generated/\(name).json")
            #expect(doc["seed"]?.int64 != nil, "\(name) records its seed")
            let codes = Set((doc["cases"]?.array ?? []).compactMap { $0["expect"]?["error"]?.string })
            var required: Set<String> = ["malformed", "token_too_large", "algorithm_not_allowed", "unsupported_header",
                                         "unknown_key", "bad_signature", "expired", "not_yet_valid", "issued_in_future",
                                         "wrong_issuer", "wrong_audience", "invalid_claim", "nonce_mismatch", "replayed",
                                         "keys_unavailable"]
            if name == "firebase" || name == "firebase-session" { required.formUnion(["tenant_mismatch", "provider_not_allowed", "revoked"]) }
            #expect(required.subtracting(codes).isEmpty, "\(name) lacks \(required.subtracting(codes).sorted())")
        }
    }

    @Test(arguments: cases) func vector(_ test: VectorCase) async throws {
        try await VectorRunner.run(test)
    }
}
