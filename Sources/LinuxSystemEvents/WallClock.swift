import FileSupport
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
    /// ``zoneIdentity()``, or why the zone could not be read now (a zone
    /// file replaced by a FIFO, a device or a huge file): the caller keeps
    /// the identity it had.
    func readZoneIdentity() -> Result<String, FileContents.RefusalReason>
}

extension WallClock {
    /// A clock whose zone can always be read.
    public func readZoneIdentity() -> Result<String, FileContents.RefusalReason> { .success(zoneIdentity()) }
}

/// The real clock: CLOCK_REALTIME and the C library's idea of the local
/// zone (TZ, else /etc/localtime), refreshed with `tzset()`.
///
/// Zone files belong to other processes and may be replaced by anything:
/// `tzset()` would block the loop opening a FIFO, so it runs only when the
/// file it reads is absent or a regular file of at most ``maxZoneFileBytes``
/// (otherwise the C library keeps the zone it has), and the content digest
/// reads only such a file.
public final class SystemWallClock: WallClock {
    /// The zone file consulted when TZ is unset.
    public let localtimePath: String
    /// The largest zone file read (real TZif files are a few KiB).
    public static let maxZoneFileBytes = 1 << 20

    public init(localtimePath: String = "/etc/localtime") {
        self.localtimePath = localtimePath
    }

    public func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    public func nextLocalMidnight(after time: Double) -> Double {
        _ = Self.refreshZone()
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
        _ = Self.refreshZone()
        func signature(_ t: Int) -> (Int, Int32) {
            var seconds = time_t(t)
            var local = tm()
            localtime_r(&seconds, &local)
            return (local.tm_gmtoff, local.tm_isdst)
        }
        let start = Int(time.rounded(.down))
        let initial = signature(start)
        // Step a day at a time for about a year, then narrow to the second.
        // No zone changes its offset and back within a day (tzdata has no
        // such pair in living memory), and a day's step is 400 `localtime_r`
        // calls where an hour's was 9,600: about 2 ms of every start-up.
        var low = start
        for day in 1...400 {
            let probe = start + day * 86_400
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
        switch readZoneIdentity() {
        case .success(let identity): identity
        case .failure(let problem): "unreadable: \(problem)"
        }
    }

    public func readZoneIdentity() -> Result<String, FileContents.RefusalReason> {
        if let problem = Self.refreshZone() { return .failure(problem) }
        let tz = getenv("TZ").map { String(cString: $0) } ?? "(unset)"
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink(localtimePath, &target, target.count - 1)
        let link = length > 0 ? String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let digest: String
        do {
            digest = Self.digest(try FileContents.regularFileBytes(localtimePath, maxBytes: Self.maxZoneFileBytes))
        } catch {
            guard error.isMissing else { return .failure(error) }
            digest = "none"
        }
        return .success("TZ=\(tz) localtime=\(link) content=\(digest)")
    }

    /// The file the C library's `tzset()` reads: TZ's file (`:PATH`, a
    /// path, or a name under `$TZDIR` or /usr/share/zoneinfo), else
    /// /etc/localtime; nil for an empty TZ (UTC).
    static func cLibraryZoneFile() -> String? {
        guard let raw = getenv("TZ") else { return "/etc/localtime" }
        var name = String(cString: raw)
        if name.hasPrefix(":") { name.removeFirst() }
        if name.isEmpty { return nil }
        if name.hasPrefix("/") { return name }
        return (getenv("TZDIR").map { String(cString: $0) } ?? "/usr/share/zoneinfo") + "/" + name
    }

    /// `tzset()` unless the file it would read is there and is not a
    /// regular file of a sane size (then the zone stays as it was, and the
    /// reason is returned).
    static func refreshZone() -> FileContents.RefusalReason? {
        if let file = cLibraryZoneFile() {
            var status = stat()
            if stat(file, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFREG else {
                    return .notRegularFile(path: file, kind: FileContents.kindName(status.st_mode))
                }
                guard status.st_size <= maxZoneFileBytes else {
                    return .tooLarge(path: file, bytes: Int(status.st_size), limit: maxZoneFileBytes)
                }
            }
        }
        tzset()
        return nil
    }

    /// A cheap digest (FNV-1a) of a file's bytes, so a zone file replaced
    /// in place (not just relinked) is noticed too.
    static func digest(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
