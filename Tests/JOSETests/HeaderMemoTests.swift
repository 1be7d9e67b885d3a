import JOSE
import Testing
import TestSupport

/// A thread remembers the last headers it read (``CompactJWS`` recalls a header segment it has seen instead of
/// decoding and reading it again). A recalled header must be exactly what reading it gives: the same algorithm,
/// `kid` (escaped or not) and header object; a header differing by one byte, or read under a tighter depth
/// limit, must be read afresh; a refused header is refused every time.
@Suite struct HeaderMemoTests {
    static func token(header: String, payload: String = #"{"sub":"1"}"#) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + ".AAAA"
    }

    static func summary(_ jws: CompactJWS) -> String {
        "\(jws.header.algorithm.map { "\($0)" } ?? "-") \(jws.header.kid ?? "-") \(jws.header.hasKid) \(jws.header.object.rawJSON) \(jws.header.type ?? "-") \(jws.payload)"
    }

    static func outcome(_ token: String, limits: JWSLimits = .default) -> String {
        do { return summary(try CompactJWS(token, limits: limits)) } catch { return "refused \(error.code)" }
    }

    static let headers = [
        #"{"alg":"RS256","kid":"6f8a2c8d1e0b4a7c9d3e5f1a2b4c6d8e0f1a3b5c","typ":"JWT"}"#,
        #"{"alg":"RS256","kid":"6f8a2c8d1e0b4a7c9d3e5f1a2b4c6d8e0f1a3b5d","typ":"JWT"}"#,
        #"{"kid":"k\u00e9y","alg":"ES256"}"#,
        #"{"alg":"PS384"}"#,
        #"{"alg":"RS256","kid":"a","x":{"y":{"z":[1,2,{"w":null}]}}}"#,
        #"{"alg":"none","kid":"a"}"#,
        #"{"alg":"RS256","crit":["b64"]}"#,
        #"{"alg":"RS256","kid":7}"#,
        #"{"alg":"RS256","alg":"ES256"}"#,
        #"{"alg":"RS256","kid":"\#(String(repeating: "long", count: 60))"}"#,
    ]

    @Test func recalledHeadersReadExactlyAsFreshOnes() {
        // The first pass reads every header; later passes recall those that passed (the memo holds four, so
        // cycling through ten also replaces entries). Every pass must say the same thing about every token.
        let tokens = Self.headers.enumerated().map { Self.token(header: $1, payload: #"{"n":\#($0)}"#) }
        let first = tokens.map { Self.outcome($0) }
        #expect(first.filter { $0.hasPrefix("refused") }.count == 4, "\(first)")
        for _ in 0..<5 {
            #expect(tokens.map { Self.outcome($0) } == first)
            for token in tokens { #expect(Self.outcome(token) == Self.outcome(token)) }
        }
    }

    @Test func aDifferentPayloadIsDecodedEvenWhenTheHeaderIsRecalled() throws {
        let header = Self.headers[0]
        let a = try CompactJWS(Self.token(header: header, payload: #"{"sub":"a"}"#))
        let b = try CompactJWS(Self.token(header: header, payload: #"{"sub":"bb"}"#))
        #expect(try a.claims()["sub"]?.string == "a")
        #expect(try b.claims()["sub"]?.string == "bb")
        #expect(a.header.kid == b.header.kid)
    }

    @Test func oneByteDifferentIsReadAfresh() {
        // Same length, one character of the encoded kid changed: a different kid, or a refusal.
        let good = Self.token(header: #"{"alg":"RS256","kid":"abcd"}"#)
        _ = Self.outcome(good)
        let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"abce"}"#.utf8))
        let other = header + "." + good.split(separator: ".")[1] + ".AAAA"
        #expect(Self.outcome(other).contains(" abce "))
        #expect(Self.outcome(good).contains(" abcd "))
    }

    @Test func aTighterDepthLimitIsApplied() {
        let deep = Self.token(header: Self.headers[4])
        #expect(!Self.outcome(deep).hasPrefix("refused"))
        #expect(Self.outcome(deep, limits: JWSLimits(maxDepth: 3)) == "refused malformed")
        #expect(!Self.outcome(deep).hasPrefix("refused"))
    }

    @Test func threadsKeepTheirOwnMemo() {
        let tokens = Self.headers.map { Self.token(header: $0) }
        let expected = tokens.map { Self.outcome($0) }
        let results = raceOnThreads(4) { thread -> [String] in
            var seen: [String] = []
            for round in 0..<200 {
                let k = (round * (thread + 3)) % tokens.count
                seen.append(Self.outcome(tokens[k]) == expected[k] ? "ok" : "wrong \(k)")
            }
            return seen
        }
        #expect(results.allSatisfy { $0.allSatisfy { $0 == "ok" } })
    }
}
