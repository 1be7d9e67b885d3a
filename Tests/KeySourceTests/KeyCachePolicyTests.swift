import IDTokenKit
import Testing

/// The cache-lifetime rules of DESIGN §5, and the time formats they read.
@Suite struct KeyCachePolicyTests {
    static let policy = KeyCachePolicy()   // floor 5 min, ceiling 24 h, default 1 h
    static let now = 1_700_000_000.0        // 2023-11-14T22:13:20Z

    static func lifetime(_ cacheControl: [String] = [], age: String? = nil, expires: String? = nil, date: String? = nil) -> Double {
        policy.lifetime(cacheControl: cacheControl, age: age, expires: expires, date: date, now: now)
    }

    @Test func maxAgeMinusAge() {
        #expect(Self.lifetime(["max-age=7200"]) == 7200)
        #expect(Self.lifetime(["public, max-age=7200, must-revalidate"], age: "1200") == 6000)
        #expect(Self.lifetime(["max-age=7200"], age: "7000") == 300, "clamped to the floor")
        #expect(Self.lifetime(["MAX-AGE = 7200"]) == 7200)
        #expect(Self.lifetime(["max-age=\"7200\""]) == 7200)
        #expect(Self.lifetime(["max-age=7200", "max-age=3600"]) == 3600, "the stricter of two directives")
        #expect(Self.lifetime(["max-age=7200"], age: "junk") == 7200, "an unreadable Age is ignored")
    }

    @Test func maxAgeWinsOverExpires() {
        #expect(Self.lifetime(["max-age=1800"], expires: "Wed, 15 Nov 2023 22:13:20 GMT") == 1800)
    }

    @Test func expiresIsMeasuredFromTheServersDate() {
        // 2 h after the server's Date, whatever the local clock says.
        #expect(Self.lifetime(expires: "Mon, 01 Jan 2024 02:00:00 GMT", date: "Mon, 01 Jan 2024 00:00:00 GMT") == 7200)
        // Without Date, from now.
        #expect(Self.lifetime(expires: "Wed, 15 Nov 2023 00:13:20 GMT") == 7200)
        // The obsolete forms are read too.
        #expect(Self.lifetime(expires: "Wednesday, 15-Nov-23 00:13:20 GMT") == 7200)
        #expect(Self.lifetime(expires: "Wed Nov 15 00:13:20 2023") == 7200)
    }

    @Test func noStoreNoCacheAndInvalidValuesGetTheFloor() {
        #expect(Self.lifetime(["no-store"]) == 300)
        #expect(Self.lifetime(["private, no-cache"]) == 300)
        #expect(Self.lifetime(["no-cache, max-age=86400"]) == 300)
        #expect(Self.lifetime(["max-age=-5"]) == 300)
        #expect(Self.lifetime(["max-age="]) == 300)
        #expect(Self.lifetime(expires: "0") == 300)
        #expect(Self.lifetime(expires: "Tue, 14 Nov 2023 00:00:00 GMT") == 300, "already expired")
        // A date that does not exist is not a date (the civil-time check shared with UnixTime.parse).
        #expect(Self.lifetime(expires: "Thu, 30 Feb 2023 00:13:20 GMT", date: "Wed, 01 Feb 2023 00:00:00 GMT") == 300)
        #expect(Self.lifetime(expires: "Wed, 15 Nov 2023 -1:13:20 GMT") == 300)
    }

    @Test func theCeilingAndTheDefault() {
        #expect(Self.lifetime(["max-age=31536000"]) == 86_400)
        #expect(Self.lifetime(expires: "Fri, 01 Jan 2100 00:00:00 GMT") == 86_400)
        #expect(Self.lifetime() == 3600)
        #expect(Self.lifetime(["public"]) == 3600)
    }

    @Test func unixTimeReadsAndWritesISO8601() {
        #expect(UnixTime.iso8601(Self.now) == "2023-11-14T22:13:20Z")
        #expect(UnixTime.iso8601(Self.now, basic: true) == "20231114T221320Z")
        #expect(UnixTime.iso8601(0) == "1970-01-01T00:00:00Z")
        #expect(UnixTime.iso8601(951_782_400) == "2000-02-29T00:00:00Z")
        #expect(UnixTime.parse("2023-11-14T22:13:20Z") == Self.now)
        #expect(UnixTime.parse("20231114T221320Z") == Self.now)
        #expect(UnixTime.parse("2023-11-15T00:13:20+02:00") == Self.now)
        #expect(UnixTime.parse("2023-11-14T22:13:20.5Z") == Self.now + 0.5)
        #expect(UnixTime.parse("1700000000") == Self.now)
        #expect(UnixTime.parse("2023-11-14T22:13:20") == Self.now)
        #expect(UnixTime.parse("2023-11-14 22:13:20") == Self.now)
        for bad in ["", "2023-11-14", "2023-13-01T00:00:00Z", "2023-11-14T25:00:00Z", "yesterday", "1e9", "-1", "2023-11-14T22:13:20Zjunk"] {
            #expect(UnixTime.parse(bad) == nil, "\(bad)")
        }
    }
}
