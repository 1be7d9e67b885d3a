import Foundation
import IDTokenKit
import Testing

/// One case of a vector file (Vectors/schema.json), as a test argument.
struct VectorCase: CustomTestStringConvertible, Sendable {
    let json: JSONTree
    var id: String { json["id"]?.string ?? "?" }
    var testDescription: String { id }

    static func load(_ relative: String) -> [VectorCase] {
        let doc = try! VectorFiles.json(relative)
        return (doc["cases"]?.array ?? []).map(VectorCase.init)
    }
}

/// Verifies a case as the schema describes it and checks the verdict, the code and the claim.
enum VectorRunner {
    static func run(_ test: VectorCase) async throws {
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
                #expect(asyncOutcome.errorCode == outcome.errorCode, "\(test.id): async and sync disagree")
                // The verification as a value gives the same verdict, and says how far a refused token got.
                let verification = verifier.evaluate(token, keys: keys, at: at, nonce: nonce)
                VerificationExpectations.check(verification, agreesWith: outcome, id: test.id)
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

/// What a ``Verification`` must say, given the throwing verifier's outcome for the same token.
enum VerificationExpectations {
    /// Codes raised at or before the signature check (DESIGN §2 steps 1–4): the signature has not verified.
    static let beforeSignature: Set<TokenError.Code> = [
        .malformed, .tokenTooLarge, .algorithmNotAllowed, .unsupportedHeader, .unknownKey, .badSignature, .keysUnavailable,
    ]

    static func check(_ verification: Verification, agreesWith outcome: Result<VerifiedToken, TokenError>, id: String) {
        switch (verification, outcome) {
        case (.accepted(let a), .success(let b)):
            #expect(a.claims.object.rawJSON == b.claims.object.rawJSON, "\(id)")
            #expect(verification.signatureVerified)
        case (.refused(let error, let signatureVerified, let header, let claims), .failure(let thrown)):
            #expect(error == thrown && error.message == thrown.message, "\(id): evaluate \(error), verify \(thrown)")
            if signatureVerified {
                // Past the signature: the payload was read (unless reading it is what failed).
                #expect(claims != nil || error.code == .malformed, "\(id)")
                #expect(header != nil, "\(id)")
            } else {
                #expect(beforeSignature.contains(error.code), "\(id): \(error.code) refused without a verified signature")
            }
            if !beforeSignature.contains(error.code) { #expect(signatureVerified, "\(id): \(error.code) before the signature") }
        default:
            Issue.record("\(id): evaluate \(verification), verify \(outcome)")
        }
    }
}
