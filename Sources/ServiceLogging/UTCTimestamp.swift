import Glibc

/// The wall-clock time of an observation or a log line: Unix seconds (to
/// the millisecond) and ISO 8601 in UTC with milliseconds. UTC, so no zone
/// file is read (a zone file may be anything, see `SystemWallClock` in LinuxSystemEvents).
public enum UTCTimestamp {
    /// Now, as `at` (Unix seconds) and `iso` (`2026-11-24T01:50:00.123Z`).
    public static func now() -> (at: Double, iso: String) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let millis = Int32(spec.tv_nsec / 1_000_000)
        let iso = "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
        return (Double(spec.tv_sec) + Double(millis) / 1000, iso)
    }
}
