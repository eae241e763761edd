import AppLifecycle
import FileSupport
import Glibc

/// Where memory pressure is read from and what trigger is written there,
/// as systemd passes them (`systemd.exec(5)`, `MemoryPressureWatch=`):
/// `$MEMORY_PRESSURE_WATCH` names a PSI file (`/proc/pressure/memory`, a
/// cgroup's `memory.pressure`), a FIFO, or `/dev/null` (off);
/// `$MEMORY_PRESSURE_WRITE` is the trigger, base64-encoded.
public struct MemoryPressureSettings: Equatable, Sendable {
    /// The file watched; nil: memory pressure is not watched.
    public var watchPath: String?
    /// The bytes written to it (a PSI trigger such as
    /// "some 200000 2000000": 200 ms of stall within 2 s).
    public var trigger: [UInt8]

    /// sd-event's default trigger: 200 ms of "some" stall within 2 s. The
    /// window is a multiple of 2 s, which unprivileged processes need.
    public static let defaultTrigger = Array("some 200000 2000000".utf8)

    /// Explicit settings.
    public init(watchPath: String?, trigger: [UInt8] = MemoryPressureSettings.defaultTrigger) {
        self.watchPath = watchPath
        self.trigger = trigger
    }

    /// The settings systemd's variables give, else this process's cgroup
    /// (v2) `memory.pressure`, else `/proc/pressure/memory`, else off
    /// (a kernel without PSI).
    /// - Throws: ``MemoryPressureError/malformedTrigger(_:)`` when
    ///   `$MEMORY_PRESSURE_WRITE` is not base64.
    public static func fromEnvironment() throws(MemoryPressureError) -> MemoryPressureSettings {
        let watch = ProcessEnvironment.value("MEMORY_PRESSURE_WATCH")
        // The cgroup is looked up only when systemd named no file (it reads
        // /proc/self/cgroup: a service's start-up need not pay for it).
        return try resolve(watch: watch, write: ProcessEnvironment.value("MEMORY_PRESSURE_WRITE"),
                           cgroupFile: watch == nil ? cgroupPressureFile() : nil, procFile: "/proc/pressure/memory")
    }

    /// The decision of ``fromEnvironment()``, testable.
    public static func resolve(watch: String?, write: String?, cgroupFile: String?,
                               procFile: String) throws(MemoryPressureError) -> MemoryPressureSettings {
        var trigger = defaultTrigger
        if let write {
            guard let decoded = Base64.decode(write), !decoded.isEmpty else { throw .malformedTrigger(write) }
            trigger = decoded
        }
        if let watch {
            return MemoryPressureSettings(watchPath: watch == "/dev/null" ? nil : watch, trigger: trigger)
        }
        for candidate in [cgroupFile, procFile].compactMap({ $0 }) where access(candidate, R_OK | W_OK) == 0 {
            return MemoryPressureSettings(watchPath: candidate, trigger: trigger)
        }
        return MemoryPressureSettings(watchPath: nil, trigger: trigger)
    }

    /// `/sys/fs/cgroup/<this process's cgroup>/memory.pressure` on a
    /// unified (v2) hierarchy, if it exists.
    static func cgroupPressureFile() -> String? {
        // Unreadable (no /proc, or not Linux's): no cgroup file, and the
        // caller falls back to /proc/pressure/memory or to not watching.
        guard let text = try? FileContents.text("/proc/self/cgroup") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            let file = "/sys/fs/cgroup" + line.dropFirst(3) + "/memory.pressure"
            return access(file, F_OK) == 0 ? file : nil
        }
        return nil
    }
}

/// Why memory pressure cannot be watched.
public enum MemoryPressureError: Error, Equatable, CustomStringConvertible {
    /// `$MEMORY_PRESSURE_WRITE` is not valid base64.
    case malformedTrigger(String)
    /// The watch file cannot be opened or the trigger written.
    case cannotWatch(path: String, operation: String, errno: Int32)
    /// The watch path is neither a PSI file nor a FIFO.
    case unsupportedFile(path: String)

    public var description: String {
        switch self {
        case .malformedTrigger(let value):
            "MEMORY_PRESSURE_WRITE='\(value)' is not base64 of a PSI trigger"
        case .cannotWatch(let path, let operation, let code):
            "cannot watch memory pressure at \(path): \(operation): \(String(cString: strerror(code)))"
        case .unsupportedFile(let path):
            "cannot watch memory pressure at \(path): not a PSI file or a FIFO"
        }
    }
}

/// Standard base64 (RFC 4648, padding optional), for `$MEMORY_PRESSURE_WRITE`.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text.utf8 {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            default: return nil
            }
            guard padding == 0 else { return nil }  // data after padding
            buffer = (buffer << 6) | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        guard padding <= 2, bits < 6 else { return nil }
        return output
    }
}
