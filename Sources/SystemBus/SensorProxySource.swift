import MainLoop
import SystemNotifications

/// Orientation and proximity from iio-sensor-proxy (`net.hadess.SensorProxy`
/// at `/net/hadess/SensorProxy` on the system bus). Readings update only for
/// clients that claimed the sensor, so the source calls `ClaimAccelerometer`
/// and `ClaimProximity` (for the sensors the device has) before reading, and
/// again when the daemon restarts.
///
/// | `AccelerometerOrientation` | orientation |
/// |---|---|
/// | `normal` | portrait |
/// | `bottom-up` | portraitUpsideDown |
/// | `right-up` | landscapeLeft |
/// | `left-up` | landscapeRight |
/// | `undefined` (or anything else) | unknown |
///
/// As in UIKit, landscape is named from the device's point of view:
/// `landscapeLeft` is the device turned so that its home edge (the bottom)
/// is on the right, i.e. its right edge up (`right-up`). `ProximityNear`
/// is `proximity`. Loop thread only.
public final class SensorProxySource {
    private var watch: DaemonPropertiesWatch?

    /// The properties read, with their kinds.
    public static let schema = DBusPropertySchema(["HasAccelerometer": .bool, "AccelerometerOrientation": .string,
                                                   "HasProximity": .bool, "ProximityNear": .bool])

    /// Starts following iio-sensor-proxy on `bus`, believing only the
    /// connection that owns `net.hadess.SensorProxy`.
    /// - Parameters:
    ///   - bus: the system bus connection.
    ///   - timeout: how long each call waits for the daemon (then it is tried again).
    ///   - post: each event, `initial` for the values read at start.
    ///   - onProblem: why the source has nothing to say, once per occurrence.
    public init(bus: SystemBusConnection, timeout: Duration = .seconds(5), post: @escaping (SystemEvent, _ initial: Bool) -> Void,
                onProblem: @escaping (String) -> Void) throws(DBusError) {
        let service = "net.hadess.SensorProxy"
        var spec = DaemonPropertiesWatch.Spec(
            service: service, interface: service, schema: Self.schema,
            resolvePath: { _, _, _, done in done(.success("/net/hadess/SensorProxy")) },
            prepare: { bus, owner, path, timeout, done in
                // Claim each sensor the device has; a device without one is not an error.
                bus.call(destination: owner, path: path, interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                         arguments: [.string(service)], timeout: timeout) { reply in
                    let properties: [String: DBusValue]
                    do throws(DBusError) {
                        properties = try reply.get().values(expecting: "a{sv}").first?.properties ?? [:]
                    } catch {
                        return done(.failure(error))
                    }
                    var claims: [String] = []
                    if properties["HasAccelerometer"]?.boolValue == true { claims.append("ClaimAccelerometer") }
                    if properties["HasProximity"]?.boolValue == true { claims.append("ClaimProximity") }
                    Self.claim(claims, bus: bus, owner: owner, path: path, timeout: timeout, done: done)
                }
            })
        // It sends readings only to the clients that claimed the sensor.
        spec.unicastChanges = true
        watch = try DaemonPropertiesWatch(bus: bus, spec: spec, timeout: timeout, onProperties: { properties, initial in
            for event in Self.events(from: properties) { post(event, initial) }
        }, onProblem: onProblem)
    }

    /// Calls each claim method in turn.
    private static func claim(_ methods: [String], bus: SystemBusConnection, owner: String, path: String, timeout: Duration,
                              done: @escaping (Result<Void, DBusError>) -> Void) {
        guard let method = methods.first else { return done(.success(())) }
        bus.call(destination: owner, path: path, interface: "net.hadess.SensorProxy", member: method, timeout: timeout) { reply in
            if case .failure(let error) = reply { return done(.failure(error)) }
            claim(Array(methods.dropFirst()), bus: bus, owner: owner, path: path, timeout: timeout, done: done)
        }
    }

    /// The events a set of (changed) sensor-proxy properties stands for.
    public static func events(from properties: [String: DBusValue]) -> [SystemEvent] {
        var events: [SystemEvent] = []
        if properties["HasAccelerometer"]?.boolValue != false, let orientation = properties["AccelerometerOrientation"]?.stringValue {
            events.append(.orientation(self.orientation(accelerometer: orientation)))
        }
        if properties["HasProximity"]?.boolValue != false, let near = properties["ProximityNear"]?.boolValue {
            events.append(.proximity(near))
        }
        return events
    }

    /// iio-sensor-proxy's `AccelerometerOrientation` as a device orientation.
    public static func orientation(accelerometer value: String) -> DeviceOrientation {
        switch value {
        case "normal": return .portrait
        case "bottom-up": return .portraitUpsideDown
        case "right-up": return .landscapeLeft
        case "left-up": return .landscapeRight
        default: return .unknown
        }
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension SensorProxySource: Sendable {}
