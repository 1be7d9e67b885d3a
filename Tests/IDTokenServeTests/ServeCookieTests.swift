import IDTokenServe
import Testing

/// The token in a `Cookie` header (`serve.cookies`, Firebase session cookies), read byte-wise.
@Suite struct ServeCookieTests {
    static let session = ["__session"]

    @Test func theNamedCookiesValueAmongOthers() {
        #expect(ServeService.cookie(named: Self.session, in: "theme=dark; __session=abc.def.ghi; lang=en") == "abc.def.ghi")
        #expect(ServeService.cookie(named: Self.session, in: "__session=abc") == "abc")
        #expect(ServeService.cookie(named: Self.session, in: "x=1;__session=abc;") == "abc")
        // Spaces before the name, and spaces and tabs around the value, go.
        #expect(ServeService.cookie(named: Self.session, in: "x=1;   __session= \tabc\t ; y=2") == "abc")
        // A value is everything after the first '='.
        #expect(ServeService.cookie(named: Self.session, in: "__session=a=b==") == "a=b==")
        // The first of the names that has a value, in the header's order.
        #expect(ServeService.cookie(named: ["a", "b"], in: "x=1; b=2; a=3") == "2")
        #expect(ServeService.cookie(named: Self.session, in: "__session=; __session= ; __session=second") == "second")
        // Bytes that are not ASCII are passed through for the verifier to judge.
        #expect(ServeService.cookie(named: ["s"], in: "é=1; s=zoë") == "zoë")
    }

    @Test func aNameMatchesByteForByte() {
        #expect(ServeService.cookie(named: Self.session, in: "__Session=abc") == nil)
        #expect(ServeService.cookie(named: Self.session, in: "x__session=abc; __session_=abc; __sessio=abc") == nil)
        #expect(ServeService.cookie(named: Self.session, in: "__session =abc") == nil)
        // U+212A KELVIN SIGN is canonically equivalent to "K": equal as Swift strings, not as a cookie's name.
        #expect(ServeService.cookie(named: ["K"], in: "\u{212A}=abc") == nil)
        #expect(ServeService.cookie(named: ["K"], in: "\u{212A}=abc; K=def") == "def")
    }

    @Test func noValueIsNoToken() {
        #expect(ServeService.cookie(named: Self.session, in: "") == nil)
        #expect(ServeService.cookie(named: Self.session, in: ";;; __session") == nil)
        #expect(ServeService.cookie(named: Self.session, in: "__session=  \t ") == nil)
        #expect(ServeService.cookie(named: [], in: "__session=abc") == nil)
    }
}
