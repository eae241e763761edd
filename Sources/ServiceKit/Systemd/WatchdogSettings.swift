import FileSupport
import Glibc

/// The service manager's watchdog request: `$WATCHDOG_USEC` (the period)
/// and `$WATCHDOG_PID` (whose it is, when set), as `sd_watchdog_enabled(3)`
/// reads them.
public struct WatchdogSettings: Equatable, Sendable {
    /// systemd restarts the service when no `WATCHDOG=1` arrives within it.
    public var period: Duration

    /// Pings are sent every half period, as systemd recommends, but never
    /// more often than every ``minimumPingInterval``.
    public var pingInterval: Duration { max(period / 2, Self.minimumPingInterval) }

    /// The shortest ping interval (10 ms). A smaller `WATCHDOG_USEC` (even
    /// `1`) would make the ping timer due at every loop pass, all CPU spent
    /// on pings; a period that short cannot be met by any service anyway.
    public static let minimumPingInterval = Duration.milliseconds(10)

    /// Whether the period asks for pings more often than the floor allows
    /// (the service then says so in its log).
    public var isBelowFloor: Bool { period / 2 < Self.minimumPingInterval }

    /// Creates settings for an explicit period.
    public init(period: Duration) { self.period = period }

    /// The settings in the environment, or nil when the watchdog is off
    /// (unset, zero, or meant for another process).
    /// - Throws: ``WatchdogSettingsError`` for a value that is not a
    ///   positive integer, rather than silently running without pings.
    public static func fromEnvironment() throws(WatchdogSettingsError) -> WatchdogSettings? {
        try parse(usec: ProcessEnvironment.value("WATCHDOG_USEC"), pid: ProcessEnvironment.value("WATCHDOG_PID"),
                  ownPID: getpid())
    }

    /// The parsing of ``fromEnvironment()``, testable.
    public static func parse(usec: String?, pid: String?, ownPID: pid_t) throws(WatchdogSettingsError) -> WatchdogSettings? {
        guard let usec else { return nil }
        if let pid {
            guard let owner = Int32(pid), owner > 0 else { throw .malformed(variable: "WATCHDOG_PID", value: pid) }
            if owner != ownPID { return nil }
        }
        guard let micros = UInt64(usec), micros > 0, micros <= UInt64(Int64.max / 1000) else {
            throw .malformed(variable: "WATCHDOG_USEC", value: usec)
        }
        return WatchdogSettings(period: .microseconds(Int64(micros)))
    }
}

/// A malformed watchdog variable.
public enum WatchdogSettingsError: Error, Equatable, CustomStringConvertible {
    /// `variable` holds `value`, which is not a positive integer.
    case malformed(variable: String, value: String)

    public var description: String {
        switch self {
        case .malformed(let variable, let value): "\(variable)='\(value)' is not a positive integer"
        }
    }
}
