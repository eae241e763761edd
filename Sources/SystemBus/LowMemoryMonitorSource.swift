import MainLoop

/// Memory warnings from low-memory-monitor (`org.freedesktop.LowMemoryMonitor`
/// on the system bus), where it runs: its `LowMemoryWarning(y level)`
/// signal, believed only from the connection that owns that name now.
/// Levels follow the daemon (and GLib's `GMemoryMonitor`): 50 low, 100
/// medium, 255 critical; each one at or above ``warningLevel`` is a memory
/// warning. Pressure stall information (ServiceKit's
/// `MemoryPressureMonitor`) stays the default source; this one adds the
/// daemon's judgement where the daemon is installed, and is silent where it
/// is not. Loop thread only.
public final class LowMemoryMonitorSource {
    /// The daemon's name, object and interface.
    public static let service = "org.freedesktop.LowMemoryMonitor"
    public static let path = "/org/freedesktop/LowMemoryMonitor"
    /// The lowest level that is a warning: low-memory-monitor's "low".
    public static let warningLevel: UInt8 = 50

    private var watch: DaemonPropertiesWatch?

    /// Starts following low-memory-monitor on `bus`.
    /// - Parameters:
    ///   - bus: the system bus connection.
    ///   - timeout: how long each call waits for the daemon (then it is tried again).
    ///   - onWarning: each warning's level (at least ``warningLevel``).
    ///   - onProblem: why the source has nothing to say, once per occurrence.
    public init(bus: SystemBusConnection, timeout: Duration = .seconds(5), onWarning: @escaping (UInt8) -> Void,
                onProblem: @escaping (String) -> Void) throws(DBusError) {
        // The daemon has no properties to read: the watch follows its owner
        // (across restarts) for the one signal.
        var spec = DaemonPropertiesWatch.Spec.fixedObject(service: Self.service, path: Self.path, schema: DBusPropertySchema([:]))
        spec.signals = [DaemonPropertiesWatch.OwnerSignal(
            path: Self.path, interface: Self.service, member: "LowMemoryWarning") { message in
            let level: Int64?
            do {
                level = try message.values(expecting: "y").first?.integerValue
            } catch {
                return onProblem("a LowMemoryWarning was ignored: \(error)")
            }
            if let level, let byte = UInt8(exactly: level), byte >= Self.warningLevel { onWarning(byte) }
        }]
        watch = try DaemonPropertiesWatch(bus: bus, spec: spec, timeout: timeout, onProperties: { _, _ in },
                                          onProblem: onProblem)
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension LowMemoryMonitorSource: Sendable {}
