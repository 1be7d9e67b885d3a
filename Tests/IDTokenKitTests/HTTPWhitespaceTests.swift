import IDTokenKit
import Testing

/// HTTP's optional whitespace (spaces and horizontal tabs) around a value, dropped byte-wise.
@Suite struct HTTPWhitespaceTests {
    @Test func spacesAndTabsAroundGoInsideStays() {
        #expect(" \t a b \t ".trimmingHTTPWhitespace() == "a b")
        #expect("abc".trimmingHTTPWhitespace() == "abc")
        #expect("\t\té ".trimmingHTTPWhitespace() == "é")
        #expect("x=  1 ".split(separator: "=")[1].trimmingHTTPWhitespace() == "1")
        #expect("".trimmingHTTPWhitespace() == "")
        #expect(" \t \t".trimmingHTTPWhitespace() == "")
    }

    @Test func otherWhitespaceIsText() {
        #expect("\u{00A0}x\u{00A0}".trimmingHTTPWhitespace() == "\u{00A0}x\u{00A0}")
        #expect("\nx\r".trimmingHTTPWhitespace() == "\nx\r")
        #expect(" \u{2028}x ".trimmingHTTPWhitespace() == "\u{2028}x")
    }
}
