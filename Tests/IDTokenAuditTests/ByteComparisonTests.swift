import IDTokenKit
import Testing

@Suite("Comparing bytes a word at a time")
struct ByteComparisonTests {
    @Test("equal only when every byte is, at any offset and length, and never past the end")
    func equality() {
        let all: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for start in 0..<24 {
            for length in 0...(all.count - start) {
                let same = Array(all[start..<(start + length)])
                #expect(all.withUnsafeBytes { a in same.withUnsafeBytes { ByteSearch.equal(a, at: start, $0) } })
                for position in 0..<length {
                    var other = same
                    other[position] ^= 0x01
                    #expect(!all.withUnsafeBytes { a in other.withUnsafeBytes { ByteSearch.equal(a, at: start, $0) } },
                            "start \(start), length \(length), byte \(position)")
                }
            }
        }
        let tail = Array(all[60...]) + [0]
        #expect(!all.withUnsafeBytes { a in tail.withUnsafeBytes { ByteSearch.equal(a, at: 60, $0) } })
    }
}
