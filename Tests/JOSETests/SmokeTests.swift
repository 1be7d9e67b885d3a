import Foundation
import Testing
@testable import JOSE

@Suite struct RFC7515Tests {
    static let vectors: JSONTree = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/vectors-external/rfc7515/rfc7515_appendix_a2_a3.json")
        return try! JSONTree.parse(Array(try! Data(contentsOf: url)))
    }()

    @Test func appendixSignaturesVerify() throws {
        let cases = Self.vectors["cases"]?.array ?? Self.vectors.array ?? []
        #expect(cases.count == 2)
        for c in cases {
            let token = c["token"]!.string!
            let keys = JWKSet.fromJWKs([c["jwk_public"]!])
            #expect(keys.rejected.isEmpty, "\(keys.rejected)")
            let jws = try CompactJWS(token)
            let key = try #require(keys.keys.first)
            #expect(jws.verifySignature(with: key))
            var bytes = Array(token.utf8)
            bytes[bytes.count - 3] = bytes[bytes.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let tampered = try CompactJWS(String(decoding: bytes, as: UTF8.self))
            #expect(!tampered.verifySignature(with: key))
        }
    }
}
