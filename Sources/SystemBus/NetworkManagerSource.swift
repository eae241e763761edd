import MainLoop
import SystemNotifications

/// The network path from NetworkManager's `Connectivity`
/// (`org.freedesktop.NetworkManager` at `/org/freedesktop/NetworkManager`),
/// believed only from the daemon's current owner.
///
/// | `Connectivity` | networkPath |
/// |---|---|
/// | 4 full | satisfied |
/// | 1 none | unsatisfied |
/// | 2 portal, 3 limited | requiresConnection |
/// | 0 unknown (or anything else) | no event: the last value stays |
///
/// Loop thread only.
public final class NetworkManagerSource {
    /// The properties read, with their kinds.
    public static let schema = DBusPropertySchema(["Connectivity": .integer])

    private var watch: DaemonPropertiesWatch?

    /// Starts following NetworkManager on `bus`.
    /// - Parameters:
    ///   - bus: the system bus connection.
    ///   - timeout: how long each call waits for the daemon (then it is tried again).
    ///   - post: each event, `initial` for the values read at start.
    ///   - onProblem: why the source has nothing to say, once per occurrence.
    public init(bus: SystemBusConnection, timeout: Duration = .seconds(5), post: @escaping (SystemEvent, _ initial: Bool) -> Void,
                onProblem: @escaping (String) -> Void) throws(DBusError) {
        let spec = DaemonPropertiesWatch.Spec.fixedObject(service: "org.freedesktop.NetworkManager",
                                                          path: "/org/freedesktop/NetworkManager", schema: Self.schema)
        watch = try DaemonPropertiesWatch(bus: bus, spec: spec, timeout: timeout, onProperties: { properties, initial in
            for event in Self.events(from: properties) { post(event, initial) }
        }, onProblem: onProblem)
    }

    /// The events a set of (changed) NetworkManager properties stands for.
    public static func events(from properties: [String: DBusValue]) -> [SystemEvent] {
        guard let connectivity = properties["Connectivity"]?.integerValue,
              let status = networkPath(connectivity: connectivity) else { return [] }
        return [.networkPath(status)]
    }

    /// NetworkManager's `NMConnectivityState` as a network path status; nil for unknown.
    public static func networkPath(connectivity: Int64) -> NetworkPathStatus? {
        switch connectivity {
        case 4: return .satisfied
        case 1: return .unsatisfied
        case 2, 3: return .requiresConnection
        default: return nil
        }
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension NetworkManagerSource: Sendable {}
