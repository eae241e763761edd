import Foundation
import MainLoopJSON
@testable import ServiceKit
@testable import ServiceLogging
import Testing
import TestSupport
@testable import mainloop

/// The timestamp of every observation and log line, written as bytes for
/// years 1000–9999 and as before for the rest.
@Suite(.ownThread) struct UTCTimestampTests {
    @Test func instantsPrintAsISO8601InUTC() {
        #expect(UTCTimestamp.iso(unixSeconds: 0, milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(UTCTimestamp.iso(unixSeconds: 1_795_500_894, milliseconds: 51) == "2026-11-24T06:14:54.051Z")
        #expect(UTCTimestamp.iso(unixSeconds: 951_782_400, milliseconds: 999) == "2000-02-29T00:00:00.999Z")
        #expect(UTCTimestamp.iso(unixSeconds: 253_402_300_799, milliseconds: 7) == "9999-12-31T23:59:59.007Z")
        // A clock set past year 9999 or before year 1000 keeps every digit of its year.
        #expect(UTCTimestamp.iso(unixSeconds: 253_402_300_800, milliseconds: 0) == "10000-01-01T00:00:00.000Z")
        #expect(UTCTimestamp.iso(unixSeconds: -30_610_224_001, milliseconds: 0) == "0999-12-31T23:59:59.000Z")
    }

    @Test func nowAgreesWithFoundationsFormatter() {
        let (at, iso) = UTCTimestamp.now()
        let milliseconds = Int((at * 1000).rounded())
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        let wholeSeconds = formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds / 1000)))
        #expect(iso == wholeSeconds.dropLast() + String(format: ".%03dZ", milliseconds % 1000))
    }

    /// The observation lines' leading fields are made once per millisecond
    /// and agree with `UTCTimestamp` (the same instant, as text and number).
    @Test func wallClockFieldsAreTheTimestampOfTheirMillisecond() throws {
        let clock = WallClockFields()
        var seen: [JSONObject] = []
        // Until the millisecond has changed at least once.
        while Set(seen.compactMap { $0["at"] }).count < 2 { seen.append(clock.now()) }
        for fields in seen {
            #expect(fields.orderedKeys == ["at", "time"])
            let at = try #require(fields["at"]?.numberValue)
            let milliseconds = Int((at * 1000).rounded())
            #expect(fields["time"] == .string(UTCTimestamp.iso(unixSeconds: milliseconds / 1000,
                                                                milliseconds: Int32(milliseconds % 1000))))
        }
    }
}
