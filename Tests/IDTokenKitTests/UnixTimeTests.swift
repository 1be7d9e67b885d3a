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
}
