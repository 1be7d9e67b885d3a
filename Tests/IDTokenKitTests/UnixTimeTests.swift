import Foundation
import IDTokenKit
import Testing

@Suite("Unix times as ISO 8601 text")
struct UnixTimeTests {
    /// The same instants written by Foundation's calendar, as an independent reference.
    func reference(_ time: Double, basic: Bool) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                        from: Date(timeIntervalSince1970: time.rounded(.down)))
        let date = String(format: basic ? "%04ld%02ld%02ld" : "%04ld-%02ld-%02ld", c.year!, c.month!, c.day!)
        let clock = String(format: basic ? "%02ld%02ld%02ld" : "%02ld:%02ld:%02ld", c.hour!, c.minute!, c.second!)
        return "\(date)T\(clock)Z"
    }

    @Test("extended and basic forms, whole seconds rounded down, from year 1600 to 9999")
    func iso8601() {
        var times: [Double] = [0, -1, 59.9, 86_399, 86_400, 951_782_400, 1_767_225_600, 1_767_268_799.5, 253_402_300_799,
                               -11_676_096_000, -2_208_988_800]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<500 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            times.append(Double(Int64(bitPattern: state >> 1) % 265_000_000_000) - 11_676_096_000)
        }
        for time in times where time >= -11_676_096_000 {
            #expect(UnixTime.iso8601(time) == reference(time, basic: false), "\(time)")
            #expect(UnixTime.iso8601(time, basic: true) == reference(time, basic: true), "\(time)")
        }
    }

    @Test("years before 1000 keep four digits; times outside years 1-9999 are written as numbers")
    func edges() {
        #expect(UnixTime.iso8601(-62_135_596_800) == "0001-01-01T00:00:00Z")
        #expect(UnixTime.iso8601(-59_011_459_200) == "0100-01-01T00:00:00Z")
        #expect(UnixTime.iso8601(253_402_300_800) == "253402300800.0")
        #expect(UnixTime.iso8601(.infinity) == "inf")
        #expect(UnixTime.parse(UnixTime.iso8601(1_767_268_800)) == 1_767_268_800)
    }

    @Test("one parser: Unix seconds, RFC 3339 with T, t or a space, basic form, offsets; no offset is UTC",
          arguments: [
            ("1767225600", 1_767_225_600.0), ("1767225600.25", 1_767_225_600.25), ("0", 0),
            ("2026-01-01T00:00:00Z", 1_767_225_600), ("2026-01-01t00:00:00z", 1_767_225_600),
            ("2026-01-01 00:00:00Z", 1_767_225_600), ("2026-01-01 00:00:00", 1_767_225_600), ("2026-01-01T00:00:00", 1_767_225_600),
            ("2026-01-01T00:00:00.5Z", 1_767_225_600.5), ("2026-01-01T00:00:00,5Z", 1_767_225_600.5),
            ("2026-01-01T02:30:00+02:30", 1_767_225_600), ("2025-12-31T19:00:00-0500", 1_767_225_600),
            ("20260101T000000Z", 1_767_225_600), ("2024-02-29T12:00:00Z", 1_709_208_000),
            ("2026-01-03 23:22:00", 1_767_482_520), ("9999-12-31T23:59:59Z", UnixTime.latest),
          ])
    func parses(_ text: String, _ seconds: Double) {
        #expect(UnixTime.parse(text) == seconds)
    }

    @Test("not times, and times outside 1970 to the year 9999, are refused",
          arguments: ["", " ", "yesterday", "1e9", "-1", "+5", ".5", "5.", "1.2.3", "0x10", "2026-13-01T00:00:00Z",
                      "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
                      "2026-01-01", "2026-01-01T00:00Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00Zjunk",
                      "2026-01-01T00:00:00+25:00", "2026-01-01  00:00:00", "20260101 000000Z", "2026-0101T00:00:00Z",
                      "1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59-01:00", "10000-01-01T00:00:00Z",
                      "253402300800", "99999999999999999999999", "２０２６-01-01T00:00:00Z"])
    func refuses(_ text: String) {
        #expect(UnixTime.parse(text) == nil)
    }

    @Test("the year-9999 bound is one constant, and what is written reads back")
    func bounds() throws {
        #expect(UnixTime.latest == 253_402_300_799)
        #expect(UnixTime.iso8601(UnixTime.latest) == "9999-12-31T23:59:59Z")
        #expect(UnixTime.parse(UnixTime.iso8601(UnixTime.latest)) == UnixTime.latest)
        #expect(UnixTime.plausible(UnixTime.latest) == UnixTime.latest)
        #expect(UnixTime.plausible(UnixTime.latest + 1) == nil)
        #expect(UnixTime.plausible(-1) == nil)
        #expect(UnixTime.plausible(.nan) == nil)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let time = Double(state % UInt64(UnixTime.latest))
            #expect(UnixTime.parse(UnixTime.iso8601(time)) == time)
            #expect(UnixTime.parse(UnixTime.iso8601(time, basic: true)) == time)
            #expect(UnixTime.parse(UnixTime.text(time)) == time)
        }
    }

    @Test("people read whole seconds: no fraction in text or messages")
    func wholeSeconds() throws {
        #expect(UnixTime.text(1_795_531_627.513626) == "1795531627")
        #expect(UnixTime.text(-0.5) == "-1")
        #expect(!UnixTime.text(1_795_531_642.794).contains("."))
        #expect(throws: ConfigurationError.self) { try UnixTime.argument("soon", option: "--at") }
        do { _ = try UnixTime.argument("soon", option: "--at") } catch {
            #expect(error.reason.hasPrefix("--at must be Unix seconds or an RFC 3339 time"))
            #expect(error.reason.hasSuffix("not \"soon\""))
        }
    }

    @Test("RFC 3339 times with offsets and fractions read as Foundation's ISO 8601 formatter reads them")
    func agreesWithFoundation() throws {
        let whole = ISO8601DateFormatter()
        whole.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var state: UInt64 = 0x51_7CC1_B727_220A
        func next(_ bound: UInt64) -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 11) % bound
        }
        for _ in 0..<3000 {
            let time = Double(86_400 + next(UInt64(UnixTime.latest) - 2 * 86_400))
            let minutes = Int(next(24 * 60 * 2 + 1)) - 24 * 60        // -24:00 … +24:00, then clipped to ±23:59
            let offset = max(-(23 * 60 + 59), min(23 * 60 + 59, minutes))
            let local = String(UnixTime.iso8601(time + Double(offset * 60)).dropLast())
            let sign = offset < 0 ? "-" : "+"
            let zone = offset == 0 && next(2) == 0 ? "Z" : String(format: "%@%02d:%02d", sign, abs(offset) / 60, abs(offset) % 60)
            let millis = Int(next(1000))
            let withFraction = next(2) == 0
            let text = local + (withFraction ? String(format: ".%03d", millis) : "") + zone
            let reference = try #require((withFraction ? fractional : whole).date(from: text), "\(text)").timeIntervalSince1970
            let parsed = try #require(UnixTime.parse(text), "\(text)")
            #expect(abs(parsed - reference) < 0.0005, "\(text)")
            #expect(parsed.rounded(.down) == time, "\(text)")
        }
    }

    @Test("whatever bytes it is given, the parser answers a time between 1970 and the year 9999 or nothing")
    func arbitraryText() {
        let pieces = ["2026", "-", "01", "T", " ", ":", "00", "59", "60", "Z", "+", "05:30", ".", ",", "9", "12", "31", "13", "0000", "9999", "x", "\u{00}", "é"]
        var state: UInt64 = 7
        for _ in 0..<20_000 {
            var text = ""
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var bits = state
            for _ in 0..<Int(bits % 14) {
                bits = bits &* 0x9E37_79B9_7F4A_7C15 &+ 1
                text += pieces[Int((bits >> 33) % UInt64(pieces.count))]
            }
            if let seconds = UnixTime.parse(text) {
                #expect(seconds >= 0 && seconds <= UnixTime.latest, "\(text)")
            }
        }
    }
}
