import Foundation
import IDTokenKit
import Testing

/// Runs every case of `Vectors/generated/*.json` through the verifier and compares the verdict, the error code
/// and (when the case names one) the claim.
@Suite struct GeneratedVectorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let json: JSONTree
        var id: String { json["id"]?.string ?? "?" }
        var testDescription: String { id }
    }

    static let files = ["firebase", "firebase-session", "apple", "facebook", "oidc"]

    static let cases: [Case] = files.flatMap { name -> [Case] in
        let doc = try! VectorFiles.json("generated/\(name).json")
        return (doc["cases"]?.array ?? []).map(Case.init)
    }

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
            if name.hasPrefix("firebase") { required.formUnion(["tenant_mismatch", "provider_not_allowed", "revoked"]) }
            #expect(required.subtracting(codes).isEmpty, "\(name) lacks \(required.subtracting(codes).sorted())")
        }
    }

    @Test(arguments: cases) func vector(_ test: Case) async throws {
        let c = test.json
        let token = try #require(c["token"]?.string)
        let profile = try VectorProfile.make(try #require(c["profile"]))
        let at = Date(timeIntervalSince1970: Double(try #require(c["at"]?.int64)))
        let nonce = VectorProfile.nonce(c["nonce"])
        let expectedError = c["expect"]?["error"]?.string
        let expectedClaim = c["expect"]?["claim"]?.string
        let replay = c["replay"]

        let outcome: Result<VerifiedToken, TokenError>
        if case .null? = c["keys"] {
            let verifier = try IDTokenVerifier(profile: profile, keys: UnavailableKeySource())
            do { outcome = .success(try await verifier.verify(token, now: at, nonce: nonce)) } catch { outcome = .failure(error) }
        } else {
            let keys = try VectorFiles.keySet(try #require(c["keys"]))
            if replay != nil {
                let cache = TestReplayCache()
                let verifier = try IDTokenVerifier(profile: profile, keys: keys, replayCache: cache)
                if replay?["seen_before"]?.bool == true { _ = try? verifier.verify(token, keys: keys, now: at, nonce: nonce) }
                do { outcome = .success(try verifier.verify(token, keys: keys, now: at, nonce: nonce)) } catch { outcome = .failure(error) }
            } else {
                let verifier = try IDTokenVerifier(profile: profile, keys: keys)
                do { outcome = .success(try verifier.verify(token, keys: keys, now: at, nonce: nonce)) } catch { outcome = .failure(error) }
                // The asynchronous path must agree with the synchronous one.
                let asyncOutcome: Result<VerifiedToken, TokenError>
                do { asyncOutcome = .success(try await verifier.verify(token, now: at, nonce: nonce)) } catch { asyncOutcome = .failure(error) }
                #expect(asyncOutcome.errorCode == outcome.errorCode, "async and sync disagree")
            }
        }

        switch outcome {
        case .success(let verified):
            #expect(expectedError == nil, "\(test.id): accepted, expected \(expectedError ?? "")")
            #expect(verified.provider == profile.provider)
            #expect(!verified.subject.isEmpty)
        case .failure(let error):
            #expect(error.code.rawValue == expectedError, "\(test.id): got \(error), expected \(expectedError ?? "valid")")
            if let expectedClaim { #expect(error.claim == expectedClaim, "\(test.id): claim \(error.claim ?? "nil")") }
            #expect(!error.message.isEmpty)
        }
    }
}

extension Result where Failure == TokenError {
    var errorCode: TokenError.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
