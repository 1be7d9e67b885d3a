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
}
