import IDTokenKit

/// Hands out one shared `String` for values that recur from token to token, such as issuers, audiences and key
/// IDs: a log of a million tokens from three providers holds a handful of distinct values, and making a new
/// string for each record's copy costs an allocation, its release, and a full hash wherever it is counted.
///
/// Compares a JSON string value's bytes with the few values it holds (no allocation), and makes a string only
/// for a value it does not hold. It holds at most `capacity` values (the last one replaced when full), so that a log of
/// forged tokens with a new value on every line costs a few comparisons a value, no more. One per field
/// (`kid`, `iss`, `aud`) and worker thread: not shared, no lock.
final class StringInterner {
    /// The values held: value k's UTF-8 bytes (compared with a JSON value's bytes in place) in slot k of `slab`,
    /// `lengths[k]` of them, and its shared text `texts[k]`. Read in place through the class's own storage: no
    /// array of pairs whose elements a look-up would copy (retaining and releasing each one's bytes and text).
    /// One worker thread uses an interner, so its accesses need no run-time exclusivity check (about 80
    /// instructions each, three values a record).
    @exclusivity(unchecked) private var lengths: [Int] = []
    @exclusivity(unchecked) private var texts: [String] = []
    private let slab: UnsafeMutableRawPointer
    private let capacity: Int
    /// Longer values are not kept (reports clip them anyway): the size of a slot.
    private static var maxLength: Int { 256 }

    init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
        slab = UnsafeMutableRawPointer.allocate(byteCount: self.capacity * Self.maxLength, alignment: 8)
        lengths.reserveCapacity(self.capacity)
        texts.reserveCapacity(self.capacity)
    }

    deinit { slab.deallocate() }

    /// The value's text, shared with earlier equal values when possible; nil when the value is not a string.
    func string(_ value: JSONValue) -> String? {
        value.withStringBytes { string($0) }
    }

    /// The text of these UTF-8 bytes (a JSON string's, decoded), shared with earlier equal values when possible.
    /// The bytes are compared in place with each held value of the same length; a string is made only for a value
    /// not held.
    func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let raw = UnsafeRawBufferPointer(bytes)
        let count = bytes.count
        for k in 0..<lengths.count where lengths[k] == count {
            if ByteSearch.equal(UnsafeRawBufferPointer(start: slab + k * Self.maxLength, count: count), raw) { return texts[k] }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if count <= Self.maxLength {
            // The last value in makes room when the interner is full.
            let k = lengths.count < capacity ? lengths.count : lengths.count - 1
            if let from = raw.baseAddress { (slab + k * Self.maxLength).copyMemory(from: from, byteCount: count) }
            if k == lengths.count {
                lengths.append(count)
                texts.append(text)
            } else {
                lengths[k] = count
                texts[k] = text
            }
        }
        return text
    }
}

/// The interners of the reported fields that recur across tokens, for one worker thread.
final class ClaimInterners {
    let kid = StringInterner(capacity: 8)
    let issuer = StringInterner(capacity: 4)
    let audience = StringInterner(capacity: 4)
}
