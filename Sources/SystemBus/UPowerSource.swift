import MainLoop
import SystemNotifications

/// Battery level and state from UPower (`org.freedesktop.UPower` on the
/// system bus): its display device (`GetDisplayDevice()`), read at start
/// and followed through `PropertiesChanged`; re-read when UPower restarts.
///
/// | UPower | event |
/// |---|---|
/// | `Percentage` (0–100) | `batteryLevel` (0.0–1.0) |
/// | `State` 1 or 5 / 2, 3 or 6 / 4 / 0 | `batteryState` charging / unplugged / full / unknown |
/// | `IsPresent` false | `batteryState` unknown (no battery; no level is posted) |
///
/// Loop thread only; keep it as long as the source should run.
public final class UPowerSource {
    private var watch: DaemonPropertiesWatch?

    /// The properties read, with their kinds.
    public static let schema = DBusPropertySchema(["Percentage": .double, "State": .integer, "IsPresent": .bool])

    /// Starts following UPower on `bus`, believing only the connection
    /// that owns `org.freedesktop.UPower` (the rules are in this module's overview).
    /// - Parameters:
    ///   - bus: the system bus connection.
    ///   - timeout: how long each call waits for UPower (then it is tried again).
    ///   - post: each event, with `initial` true for the values read at
    ///     start (a baseline, not a change) and false for changes.
    ///   - onProblem: why the source has nothing to say (UPower not
    ///     running, gone away, an error reply), once per occurrence.
    public init(bus: SystemBusConnection, timeout: Duration = .seconds(5), post: @escaping (SystemEvent, _ initial: Bool) -> Void,
                onProblem: @escaping (String) -> Void) throws(DBusError) {
        let spec = DaemonPropertiesWatch.Spec(
            service: "org.freedesktop.UPower", interface: "org.freedesktop.UPower.Device", schema: Self.schema,
            resolvePath: { bus, owner, timeout, done in
                bus.call(destination: owner, path: "/org/freedesktop/UPower",
                         interface: "org.freedesktop.UPower", member: "GetDisplayDevice", timeout: timeout) { reply in
                    done(DaemonPropertiesWatch.objectPath(of: reply))
                }
            },
            prepare: { _, _, _, _, done in done(.success(())) })
        watch = try DaemonPropertiesWatch(bus: bus, spec: spec, timeout: timeout, onProperties: { properties, initial in
            for event in Self.events(from: properties) { post(event, initial) }
        }, onProblem: onProblem)
    }

    /// The events a set of (changed) UPower device properties stands for.
    public static func events(from properties: [String: DBusValue]) -> [SystemEvent] {
        if properties["IsPresent"]?.boolValue == false { return [.batteryState(.unknown)] }
        var events: [SystemEvent] = []
        if let percentage = properties["Percentage"]?.doubleValue, percentage.isFinite {
            events.append(.batteryLevel(min(1, max(0, percentage / 100))))
        }
        if let state = properties["State"]?.integerValue { events.append(.batteryState(batteryState(upowerState: state))) }
        return events
    }

    /// UPower's `State` as a battery state.
    public static func batteryState(upowerState: Int64) -> BatteryState {
        switch upowerState {
        case 1, 5: return .charging      // charging, pending charge
        case 2, 3, 6: return .unplugged  // discharging, empty, pending discharge
        case 4: return .full
        default: return .unknown
        }
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension UPowerSource: Sendable {}
