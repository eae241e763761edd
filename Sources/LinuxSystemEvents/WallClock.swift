import Glibc

/// The wall clock and local time zone the time sources consult. The
/// production implementation is ``SystemWallClock``; tests inject a clock
/// with a scripted zone so midnight and DST transitions are deterministic.
public protocol WallClock: AnyObject {
    /// Seconds since the Unix epoch.
    func now() -> Double
    /// The next local midnight strictly after `time`.
    func nextLocalMidnight(after time: Double) -> Double
    /// The next instant after `time` (within about a year) at which the
    /// local zone's UTC offset or DST flag changes, if any.
    func nextDaylightSavingTransition(after time: Double) -> Double?
    /// Something that identifies the current zone (changes when it changes).
    func zoneIdentity() -> String
}

/// The real clock: CLOCK_REALTIME and the C library's idea of the local
/// zone (TZ, else /etc/localtime), refreshed with `tzset()`.
public final class SystemWallClock: WallClock {
    /// The zone file consulted when TZ is unset.
    public let localtimePath: String

    public init(localtimePath: String = "/etc/localtime") {
        self.localtimePath = localtimePath
    }

    public func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    public func nextLocalMidnight(after time: Double) -> Double {
        tzset()
        var seconds = time_t(time.rounded(.down))
        var local = tm()
        localtime_r(&seconds, &local)
        local.tm_mday += 1
        local.tm_hour = 0
        local.tm_min = 0
        local.tm_sec = 0
        local.tm_isdst = -1
        return Double(mktime(&local))
    }

    public func nextDaylightSavingTransition(after time: Double) -> Double? {
        tzset()
        func signature(_ t: Int) -> (Int, Int32) {
            var seconds = time_t(t)
            var local = tm()
            localtime_r(&seconds, &local)
            return (local.tm_gmtoff, local.tm_isdst)
        }
        let start = Int(time.rounded(.down))
        let initial = signature(start)
        // Step an hour at a time for about a year, then narrow to the second.
        var low = start
        for hour in 1...(24 * 400) {
            let probe = start + hour * 3600
            if signature(probe) != initial {
                var high = probe
                while high - low > 1 {
                    let middle = (low + high) / 2
                    if signature(middle) == initial { low = middle } else { high = middle }
                }
                return Double(high)
            }
            low = probe
        }
        return nil
    }

    public func zoneIdentity() -> String {
        tzset()
        let tz = getenv("TZ").map { String(cString: $0) } ?? "(unset)"
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink(localtimePath, &target, target.count - 1)
        let link = length > 0 ? String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return "TZ=\(tz) localtime=\(link) content=\(Self.contentDigest(localtimePath))"
    }

    /// A cheap digest (FNV-1a) of a file, so a zone file replaced in place
    /// (not just relinked) is noticed too.
    static func contentDigest(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "none" }
        defer { close(fd) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            for byte in buffer[0..<count] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        return String(hash, radix: 16)
    }
}
