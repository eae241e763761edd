import Glibc

/// The service manager's watchdog request: `$WATCHDOG_USEC` (the period)
/// and `$WATCHDOG_PID` (whose it is, when set), as `sd_watchdog_enabled(3)`
/// reads them.
public struct WatchdogSettings: Equatable, Sendable {
    /// systemd restarts the service when no `WATCHDOG=1` arrives within it.
    public var period: Duration

    /// Pings are sent every half period, as systemd recommends.
    public var pingInterval: Duration { period / 2 }

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
