import JOSE
import Testing

/// `ByteSearch.allASCII` reads sixty-four bytes a test, then sixteen bytes a vector compare, then the rest one at a
/// time; it must answer exactly what a byte-by-byte reading does, and `firstIndex(outside:_:in:from:)` find the byte
/// that reading finds.
@Suite struct ByteSearchTests {
    @Test func allASCIIAgreesWithReadingByteByByte() {
        var mismatches: [String] = []
        var checked = 0
        for length in Array(1...20) + [31, 32, 33, 47, 48, 49, 63, 64, 65, 127, 128, 129, 200] {
            for place in 0..<length {
                for byte in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[place] = UInt8(byte)
                    // A second odd byte further on: a word ruled out early must still be read to its end.
                    if place + 9 < length { bytes[place + 9] = 0x7F }
                    for lowest: UInt8 in [0x20, 0x21] {
                        let expected = bytes.allSatisfy { $0 >= lowest && $0 < 0x7F }
                        let got = bytes.withUnsafeBytes { ByteSearch.allASCII($0, from: lowest) }
                        if got != expected { mismatches.append("length \(length), 0x\(String(byte, radix: 16)) at \(place), from \(lowest)") }
                        let first = bytes.firstIndex { $0 < lowest || $0 > 0x7E } ?? length
                        let found = bytes.withUnsafeBytes { ByteSearch.firstIndex(outside: lowest, 0x7E, in: $0, from: 0) }
                        if found != first { mismatches.append("first outside: \(found) for \(first), length \(length), 0x\(String(byte, radix: 16)) at \(place)") }
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == (210 + 31 + 32 + 33 + 47 + 48 + 49 + 63 + 64 + 65 + 127 + 128 + 129 + 200) * 256 * 2)
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect([UInt8]().withUnsafeBytes { ByteSearch.allASCII($0, from: 0x21) })
    }

    @Test func theFirstByteOutsideIsFoundFromAnyStart() {
        // A header line's scan starts where the line does: every start, with the odd byte in each block after it.
        var mismatches: [String] = []
        for start in 0..<70 {
            for place in stride(from: start, to: 300, by: 7) {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 300)
                bytes[place] = 0x0D
                let found = bytes.withUnsafeBytes { ByteSearch.firstIndex(outside: 0x20, 0x7E, in: $0, from: start) }
                if found != place { mismatches.append("\(found) for \(place) from \(start)") }
            }
            let clean = [UInt8](repeating: UInt8(ascii: "a"), count: 300)
            if clean.withUnsafeBytes({ ByteSearch.firstIndex(outside: 0x20, 0x7E, in: $0, from: start) }) != 300 { mismatches.append("clean from \(start)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
