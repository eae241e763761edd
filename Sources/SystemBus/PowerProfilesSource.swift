import MainLoop
import SystemNotifications

/// Low power mode from power-profiles-daemon: its `ActiveProfile` being
/// `power-saver` is `lowPowerMode` true, any other profile false. The
/// daemon owns `org.freedesktop.UPower.PowerProfiles` and, from older
/// releases on, `net.hadess.PowerProfiles`; the source follows both names
/// (each believed only from its current owner), so either release works,
/// and a daemon that owns both reports the same value twice, which is no
/// change. Read at start and followed through `PropertiesChanged`; read
/// again when the daemon restarts. Loop thread only.
public final class PowerProfilesSource {
    /// The names power-profiles-daemon owns, newest first, with their object paths.
    public static let names: [(service: String, path: String)] = [
        ("org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles"),
        ("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles"),
    ]

    /// The properties read, with their kinds.
    public static let schema = DBusPropertySchema(["ActiveProfile": .string])

    private var watches: [DaemonPropertiesWatch] = []

    /// Starts following power-profiles-daemon on `bus`.
    /// - Parameters:
    ///   - bus: the system bus connection.
    ///   - timeout: how long each call waits for the daemon (then it is tried again).
    ///   - post: each event, `initial` for the values read at start.
    ///   - onProblem: why the source has nothing to say, once per occurrence.
    public init(bus: SystemBusConnection, timeout: Duration = .seconds(5), post: @escaping (SystemEvent, _ initial: Bool) -> Void,
                onProblem: @escaping (String) -> Void) throws(DBusError) {
        for name in Self.names {
            let spec = DaemonPropertiesWatch.Spec.fixedObject(service: name.service, path: name.path, schema: Self.schema)
            watches.append(try DaemonPropertiesWatch(bus: bus, spec: spec, timeout: timeout, onProperties: { properties, initial in
                for event in Self.events(from: properties) { post(event, initial) }
            }, onProblem: onProblem))
        }
    }

    /// The events a set of (changed) power-profiles-daemon properties stands for.
    public static func events(from properties: [String: DBusValue]) -> [SystemEvent] {
        guard let profile = properties["ActiveProfile"]?.stringValue else { return [] }
        return [.lowPowerMode(profile == "power-saver")]
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension PowerProfilesSource: Sendable {}
