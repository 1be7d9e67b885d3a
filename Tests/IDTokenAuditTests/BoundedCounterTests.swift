import IDTokenAudit
import Testing

@Suite("Bounded counters")
struct BoundedCounterTests {
    @Test("counts match a plain dictionary's for values that recur, arrive late, or come beyond the limit")
    func counts() {
        var counter = BoundedCounter(limit: 12)
        var expected: [String: Int] = [:]
        var other = 0
        // Values recur in a shifting mix (more of them than the counter remembers as recent), new values keep
        // arriving, and some arrive after the limit is reached.
        var seed: UInt64 = 42
        for k in 0..<5000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let value = k % 97 == 0 ? "late-\(k)" : "value-\(Int(seed >> 33) % 10)"
            let n = Int(seed >> 60) + 1
            counter.add(value, n)
            if expected[value] != nil || expected.count < 12 { expected[value, default: 0] += n } else { other += n }
        }
        #expect(counter.counts == expected)
        #expect(counter.otherCount == other)
        #expect(counter.total == expected.values.reduce(other, +))
    }
}
