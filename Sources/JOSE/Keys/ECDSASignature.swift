/// JWS carries ECDSA signatures as raw `r‖s` (RFC 7518 §3.4); libcrypto verifies DER. The conversion is
/// where range checks belong: r and s must lie in [1, n−1], and any other length is refused before any
/// arithmetic.
enum ECDSASignature {
    /// Writes DER `SEQUENCE { INTEGER r, INTEGER s }` into `out`; nil if r or s is out of range.
    @usableFromInline
    static func rawToDER(_ raw: UnsafeRawBufferPointer, curve: Curve, into out: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        let half = curve.coordinateLength
        guard raw.count == 2 * half else { return nil }
        let r = UnsafeRawBufferPointer(rebasing: raw[0..<half])
        let s = UnsafeRawBufferPointer(rebasing: raw[half..<(2 * half)])
        let order = curve.order
        guard inRange(r, order), inRange(s, order) else { return nil }
        var o = 2
        o = appendInteger(r, out, o)
        o = appendInteger(s, out, o)
        // Both integers are at most 49 bytes each with their headers, so the length fits one byte (< 128).
        out[0] = 0x30
        out[1] = UInt8(o - 2)
        return o
    }

    /// 1 ≤ v ≤ n−1, comparing big-endian byte strings of equal length.
    static func inRange(_ v: UnsafeRawBufferPointer, _ order: [UInt8]) -> Bool {
        var nonzero = false
        for b in v where b != 0 { nonzero = true; break }
        guard nonzero else { return false }
        for k in 0..<v.count {
            if v[k] < order[k] { return true }
            if v[k] > order[k] { return false }
        }
        return false  // equal to n
    }

    static func appendInteger(_ v: UnsafeRawBufferPointer, _ out: UnsafeMutableBufferPointer<UInt8>, _ at: Int) -> Int {
        var start = 0
        while start < v.count - 1, v[start] == 0 { start += 1 }
        let pad = v[start] & 0x80 != 0 ? 1 : 0
        let length = v.count - start + pad
        var o = at
        out[o] = 0x02
        out[o + 1] = UInt8(length)
        o += 2
        if pad == 1 { out[o] = 0; o += 1 }
        for k in start..<v.count { out[o] = v[k]; o += 1 }
        return o
    }
}
