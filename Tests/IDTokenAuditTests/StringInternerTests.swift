@testable import IDTokenAudit
import IDTokenKit
import Testing

@Suite("Interning reported values")
struct StringInternerTests {
    @Test("equal values share a string, other values keep their own text, escapes are decoded, non-strings are nil")
    func interning() throws {
        let object = try JSONObject.parse(#"{"a":"W6WcOKB","b":"W6WcOKC","c":"W6WcOKB","d":"W6\u0057cOKB","e":"x","f":7,"g":"W6WcOK"}"#)
        func value(_ name: String) throws -> JSONValue { try #require(object[name]) }
        let interner = StringInterner(capacity: 2)
        #expect(interner.string(try value("a")) == "W6WcOKB")
        #expect(interner.string(try value("b")) == "W6WcOKC")
        #expect(interner.string(try value("c")) == "W6WcOKB")
        #expect(interner.string(try value("d")) == "W6WcOKB")
        #expect(interner.string(try value("g")) == "W6WcOK")
        // Full: the newest value replaced the last one held; the first is still answered from the interner.
        #expect(interner.string(try value("e")) == "x")
        #expect(interner.string(try value("a")) == "W6WcOKB")
        #expect(interner.string(try value("f")) == nil)
    }

    @Test("values up to a slot's size are held and answered byte for byte; longer ones are made and not held")
    func slotSizes() {
        let interner = StringInterner(capacity: 3)
        let values = [String(repeating: "a", count: 255) + "b", String(repeating: "a", count: 256) + "c", "", "é", "ab"]
        for _ in 0..<3 {
            for value in values {
                let bytes = Array(value.utf8)
                #expect(bytes.withUnsafeBufferPointer { interner.string($0) } == value)
            }
        }
        // A new value on every call: the first value held is still answered from its slot, the others replaced.
        for k in 0..<50 {
            let value = "kid-\(k)"
            #expect(Array(value.utf8).withUnsafeBufferPointer { interner.string($0) } == value)
            #expect(Array(values[0].utf8).withUnsafeBufferPointer { interner.string($0) } == values[0])
        }
    }
}
