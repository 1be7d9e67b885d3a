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
    /// Each value held: its UTF-8 bytes (compared with a JSON value's bytes in place) and its shared text.
    /// One worker thread uses an interner, so its accesses need no run-time exclusivity check (about 80
    /// instructions each, three values a record).
    @exclusivity(unchecked) private var values: [(bytes: [UInt8], text: String)] = []
    private let capacity: Int
    /// Longer values are not kept (reports clip them anyway).
    private let maxLength = 256

    init(capacity: Int = 8) {
        self.capacity = max(1, capacity)
        values.reserveCapacity(self.capacity)
    }

    /// The value's text, shared with earlier equal values when possible; nil when the value is not a string.
    func string(_ value: JSONValue) -> String? {
        value.withStringBytes { string($0) }
    }

    /// The text of these UTF-8 bytes (a JSON string's, decoded), shared with earlier equal values when possible.
    /// The bytes are compared in place with each held value of the same length; a string is made only for a value
    /// not held.
    func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let raw = UnsafeRawBufferPointer(bytes)
        // Read in place: a copy of each held value (its bytes and its text) would retain and release both.
        let held = values.withUnsafeBufferPointer { values -> String? in
            for k in values.indices where values[k].bytes.count == bytes.count {
                if values[k].bytes.withUnsafeBytes({ ByteSearch.equal($0, at: 0, raw) }) { return values[k].text }
            }
            return nil
        }
        if let held { return held }
        let text = String(decoding: bytes, as: UTF8.self)
        if bytes.count <= maxLength {
            let entry = (bytes: Array(bytes), text: text)
            if values.count < capacity {
                values.append(entry)
            } else {
                values[values.count - 1] = entry     // the last value in makes room
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
