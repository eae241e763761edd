import FileSupport
import Glibc
import MainLoop
import SystemNotifications

/// Protected data and wake-ups from systemd-logind (`org.freedesktop.login1`
/// on the system bus), believed only from the connection that owns that
/// name.
///
/// - The process's session (`$XDG_SESSION_ID`, else `GetSessionByPID` of
///   this process): `LockedHint` true → `protectedData` unavailable, false →
///   available; read at start, followed through `PropertiesChanged` (logind
///   sends it when `Lock`/`Unlock` change the hint).
/// - It fails closed: protected data is unavailable from the start until
///   logind has answered, and again when logind leaves the bus (until it is
///   back). Where the answer is that nothing can lock it, it is available:
///   logind is not on the bus at start (a system without logind), or logind
///   knows no such session (a system service has none).
/// - `PrepareForSleep(false)` from logind: the system woke from sleep;
///   ``onWake`` runs so the time source re-checks the clock and the zone
///   (a wake is a cue, not a kind of its own). Rate-limit what it does:
///   ServiceKit's `SystemBusSources` runs it at most once a second.
///
/// Loop thread only.
public final class LogindSource {
    /// Runs when the system wakes from sleep.
    public var onWake: () -> Void = {}
    private var watch: DaemonPropertiesWatch?

    /// The properties read, with their kinds.
    public static let schema = DBusPropertySchema(["LockedHint": .bool])

    /// The errors with which logind says the session does not exist.
    static let noSessionErrors: Set<String> = ["org.freedesktop.login1.NoSuchSession", "org.freedesktop.login1.NoSessionForPID"]

    /// Starts following logind on `bus`; posts protected data unavailable
    /// (as an initial value) before anything is asked.
    /// - Parameters:
    ///   - bus: the system bus connection.
    ///   - sessionID: the session to follow (default: `$XDG_SESSION_ID`,
    ///     else the session of this process).
    ///   - timeout: how long each call waits for logind (then it is tried again).
    ///   - post: each event, `initial` for the values read at start.
    ///   - onProblem: why the source has nothing to say, once per occurrence.
    public init(bus: SystemBusConnection, sessionID: String? = ProcessSession.id, timeout: Duration = .seconds(5),
                post: @escaping (SystemEvent, _ initial: Bool) -> Void,
                onProblem: @escaping (String) -> Void) throws(DBusError) {
        let service = "org.freedesktop.login1"
        let manager = "/org/freedesktop/login1"
        post(.protectedData(available: false), true)
        var spec = DaemonPropertiesWatch.Spec(
            service: service, interface: "org.freedesktop.login1.Session", schema: Self.schema,
            resolvePath: { bus, owner, timeout, done in
                let member = sessionID == nil ? "GetSessionByPID" : "GetSession"
                let argument: DBusArgument = sessionID.map { .string($0) } ?? .uint32(UInt32(getpid()))
                bus.call(destination: owner, path: manager, interface: "org.freedesktop.login1.Manager", member: member,
                         arguments: [argument], timeout: timeout) { reply in
                    if case .failure(.remote(let name, _)) = reply, Self.noSessionErrors.contains(name) {
                        post(.protectedData(available: true), true)  // no session: nothing locks it
                    }
                    done(DaemonPropertiesWatch.objectPath(of: reply))
                }
            },
            prepare: { _, _, _, _, done in done(.success(())) })
        spec.signals = [DaemonPropertiesWatch.OwnerSignal(
            path: manager, interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep") { [weak self] message in
            let going: Bool?
            do {
                going = try message.values(expecting: "b").first?.boolValue
            } catch {
                return onProblem("a PrepareForSleep was ignored: \(error)")
            }
            if going == false { self?.onWake() }  // true: going to sleep
        }]
        watch = try DaemonPropertiesWatch(bus: bus, spec: spec, timeout: timeout, onProperties: { properties, initial in
            for event in Self.events(from: properties) { post(event, initial) }
        }, onProblem: onProblem, onAbsent: { left in
            // Not there at start: no lock service on this system. Gone: unknown, so closed.
            post(.protectedData(available: !left), !left)
        })
    }

    /// The events a set of (changed) session properties stands for.
    public static func events(from properties: [String: DBusValue]) -> [SystemEvent] {
        guard let locked = properties["LockedHint"]?.boolValue else { return [] }
        return [.protectedData(available: !locked)]
    }
}

/// The login session this process belongs to, as its environment names it.
public enum ProcessSession {
    /// `$XDG_SESSION_ID`, if set and not empty.
    public static var id: String? { ProcessEnvironment.value("XDG_SESSION_ID") }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension LogindSource: Sendable {}
