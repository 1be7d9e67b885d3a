/// Comparisons whose running time does not depend on where two secrets differ.
enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes. Only the lengths may leak through timing.
    static func equals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for k in 0..<a.count { difference |= a[k] ^ b[k] }
        return difference == 0
    }
}
