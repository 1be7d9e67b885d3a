@testable import IDTokenServe
import Testing

/// The gRPC door's HPACK decoder on RFC 7541's own examples (Appendix C: requests without and with Huffman coding,
/// responses that evict entries from a 256-byte table), and on the blocks the RFC says to refuse. The connection that
/// uses it is checked from Python's grpcio and h2 (scripts/check_grpc.py, check_grpc_hostile.py), and the decoder
/// against swift-nio-http2's by the FuzzGRPCConnection fuzz target.
struct HeaderBlockDecoderTests {
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    static func decode(_ decoder: inout HeaderBlockDecoder, _ hex: String) throws(HeaderBlockDecoder.Failure) -> [String] {
        var fields: [String] = []
        let block = bytes(hex)
        let failure = block.withUnsafeBytes { block -> HeaderBlockDecoder.Failure? in
            do throws(HeaderBlockDecoder.Failure) {
                try decoder.decode(block) { name, value in
                    fields.append(String(decoding: name, as: UTF8.self) + ": " + String(decoding: value, as: UTF8.self))
                }
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        return fields
    }

    // RFC 7541 C.3 and C.4: three requests on one connection, the second and third naming the first's entries.
    static let requests = [":method: GET", ":scheme: http", ":path: /", ":authority: www.example.com"]
    static let secondRequest = requests + ["cache-control: no-cache"]
    static let thirdRequest = [":method: GET", ":scheme: https", ":path: /index.html", ":authority: www.example.com",
                               "custom-key: custom-value"]

    @Test func requestsWithoutHuffmanCoding() throws {
        var decoder = HeaderBlockDecoder(maxListSize: 16_384)
        #expect(try Self.decode(&decoder, "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d") == Self.requests)
        #expect(try Self.decode(&decoder, "8286 84be 5808 6e6f 2d63 6163 6865") == Self.secondRequest)
        #expect(try Self.decode(&decoder, "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65")
                == Self.thirdRequest)
    }

    @Test func requestsWithHuffmanCoding() throws {
        var decoder = HeaderBlockDecoder(maxListSize: 16_384)
        #expect(try Self.decode(&decoder, "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff") == Self.requests)
        #expect(try Self.decode(&decoder, "8286 84be 5886 a8eb 1064 9cbf") == Self.secondRequest)
        #expect(try Self.decode(&decoder, "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf") == Self.thirdRequest)
    }

    // RFC 7541 C.5 and C.6: three responses with a 256-byte table (set here by a size update before the first block),
    // whose entries are evicted as the RFC shows.
    static let firstResponse = [":status: 302", "cache-control: private", "date: Mon, 21 Oct 2013 20:13:21 GMT",
                                "location: https://www.example.com"]
    static let secondResponse = [":status: 307"] + firstResponse.dropFirst()
    static let thirdResponse = [":status: 200", "cache-control: private", "date: Mon, 21 Oct 2013 20:13:22 GMT",
                                "location: https://www.example.com", "content-encoding: gzip",
                                "set-cookie: foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"]

    @Test func responsesEvictingWithoutHuffmanCoding() throws {
        var decoder = HeaderBlockDecoder(maxListSize: 16_384)
        #expect(try Self.decode(&decoder, "3fe101" + """
            4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d
            546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d
            """) == Self.firstResponse)
        #expect(try Self.decode(&decoder, "4803 3330 37c1 c0bf") == Self.secondResponse)
        #expect(try Self.decode(&decoder, """
            88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f
            6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b
            2076 6572 7369 6f6e 3d31
            """) == Self.thirdResponse)
        // What the RFC's table holds after the third response: set-cookie (62), content-encoding (63), date (64); the
        // location entry (65) was evicted.
        #expect(try Self.decode(&decoder, "bebfc0") == [Self.thirdResponse[5], Self.thirdResponse[4], Self.thirdResponse[2]])
        #expect(throws: HeaderBlockDecoder.Failure.compression) { try Self.decode(&decoder, "c1") }
    }

    @Test func responsesEvictingWithHuffmanCoding() throws {
        var decoder = HeaderBlockDecoder(maxListSize: 16_384)
        #expect(try Self.decode(&decoder, "3fe101" + """
            4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7
            8f0b 97c8 e9ae 82ae 43d3
            """) == Self.firstResponse)
        #expect(try Self.decode(&decoder, "4883 640e ffc1 c0bf") == Self.secondResponse)
        #expect(try Self.decode(&decoder, """
            88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335
            dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07
            """) == Self.thirdResponse)
    }

    /// Every octet, Huffman-coded with the RFC's code built here bit by bit, decodes to itself.
    @Test func everyOctetRoundTrips() throws {
        func encode(_ octets: [UInt8]) -> [UInt8] {
            // The canonical code: lengths in order, codes consecutive within a length.
            var codes = [UInt32](repeating: 0, count: 257)
            var code: UInt32 = 0, previous = 0
            for symbol in (0...256).sorted(by: { (HuffmanCode.lengths[$0], $0) < (HuffmanCode.lengths[$1], $1) }) {
                let length = Int(HuffmanCode.lengths[symbol])
                code <<= UInt32(length - previous)
                previous = length
                codes[symbol] = code
                code += 1
            }
            var bits: [Bool] = []
            for octet in octets {
                let length = Int(HuffmanCode.lengths[Int(octet)])
                for k in (0..<length).reversed() { bits.append(codes[Int(octet)] >> UInt32(k) & 1 == 1) }
            }
            while bits.count % 8 != 0 { bits.append(true) }
            return stride(from: 0, to: bits.count, by: 8).map { start in
                bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
            }
        }
        let octets = (0...255).map { UInt8($0) } + Array("/envoy.service.auth.v3.Authorization/Check".utf8)
        var decoded: [UInt8] = []
        let ok = encode(octets).withUnsafeBytes { HuffmanCode.decode($0, into: &decoded) }
        #expect(ok && decoded == octets)
    }

    @Test func refusesWhatTheRFCSaysToRefuse() {
        let refused: [(String, String, HeaderBlockDecoder.Failure)] = [
            ("index 0", "80", .compression),
            ("an index past both tables", "be", .compression),
            ("a string past the block", "400a 6375 7374", .compression),
            ("an integer past 2^31", "ff ff ff ff ff 0f", .compression),
            ("an integer without its end", "ff ff", .compression),
            ("a table size above 4,096", "3fe21f", .compression),
            ("a table size update after a field", "82 20", .compression),
            ("three table size updates", "20 20 20 82", .compression),
            ("a Huffman string holding EOS", "0085 ffff ffff ff", .compression),
            ("Huffman padding of eight bits", "0082 1fff", .compression),
            ("Huffman padding that is not all ones", "0081 18", .compression),
        ]
        for (label, hex, failure) in refused {
            var decoder = HeaderBlockDecoder(maxListSize: 16_384)
            #expect(throws: failure, "\(label)") { try Self.decode(&decoder, hex) }
        }
    }

    /// A block of references to one large entry stops at the list limit, not after decoding them all.
    @Test func aBlockPastTheListSizeIsTooLarge() throws {
        var decoder = HeaderBlockDecoder(maxListSize: 1000)
        let large = "40 01 78 7f 91 02" + String(repeating: "61", count: 400)  // x: 400 × "a", added to the table
        #expect(try Self.decode(&decoder, large).count == 1)
        #expect(throws: HeaderBlockDecoder.Failure.tooLarge) { try Self.decode(&decoder, String(repeating: "be", count: 4000)) }
        // A size update to 0 empties the table; a size of 0 stays usable (nothing is added).
        var small = HeaderBlockDecoder(maxListSize: 1000)
        #expect(try Self.decode(&small, "20 4001 7801 79") == ["x: y"])
        #expect(throws: HeaderBlockDecoder.Failure.compression) { try Self.decode(&small, "be") }
    }
}
