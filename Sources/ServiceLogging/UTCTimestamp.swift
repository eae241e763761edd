import Glibc

/// The wall-clock time of an observation or a log line: Unix seconds (to
/// the millisecond) and ISO 8601 in UTC with milliseconds. UTC, so no zone
/// file is read (a zone file may be anything, see `SystemWallClock` in LinuxSystemEvents).
public enum UTCTimestamp {
    /// Now, as `at` (Unix seconds) and `iso` (`2026-11-24T01:50:00.123Z`).
    public static func now() -> (at: Double, iso: String) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return instant(unixSeconds: spec.tv_sec, milliseconds: Int32(spec.tv_nsec / 1_000_000))
    }

    /// The instant `unixSeconds` + `milliseconds` as ``now()`` gives it:
    /// seconds as a Double and the ISO 8601 text.
    public static func instant(unixSeconds: Int, milliseconds: Int32) -> (at: Double, iso: String) {
        (Double(unixSeconds) + Double(milliseconds) / 1000, iso(unixSeconds: unixSeconds, milliseconds: milliseconds))
    }

    /// The ISO 8601 text of an instant in UTC.
    static func iso(unixSeconds: Int, milliseconds: Int32) -> String {
        var seconds = unixSeconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let year = parts.tm_year + 1900
        return (1000...9999).contains(year) ? fourDigitYearISO(parts, year: year, millis: milliseconds)
                                            : anyYearISO(parts, year: year, millis: milliseconds)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` written as 24 bytes into one string: this
    /// runs for every observation and log line.
    private static func fourDigitYearISO(_ parts: tm, year: Int32, millis: Int32) -> String {
        String(unsafeUninitializedCapacity: 24) { buffer in
            var position = 0
            func put(_ value: Int32, width: Int, then separator: UInt8) {
                var rest = value
                for offset in stride(from: width - 1, through: 0, by: -1) {
                    buffer[position + offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                buffer[position + width] = separator
                position += width + 1
            }
            put(year, width: 4, then: UInt8(ascii: "-"))
            put(parts.tm_mon + 1, width: 2, then: UInt8(ascii: "-"))
            put(parts.tm_mday, width: 2, then: UInt8(ascii: "T"))
            put(parts.tm_hour, width: 2, then: UInt8(ascii: ":"))
            put(parts.tm_min, width: 2, then: UInt8(ascii: ":"))
            put(parts.tm_sec, width: 2, then: UInt8(ascii: "."))
            put(millis, width: 3, then: UInt8(ascii: "Z"))
            return position
        }
    }

    /// The same for a clock set outside years 1000–9999 (a year keeps all
    /// its digits).
    private static func anyYearISO(_ parts: tm, year: Int32, millis: Int32) -> String {
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
    }
}
