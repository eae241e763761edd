import FileSupport
import Glibc
import MainLoop
import SystemNotifications

/// Protected data and wake-ups from systemd-logind (`org.freedesktop.login1`
/// on the system bus).
///
/// - The process's session (`$XDG_SESSION_ID`, else `GetSessionByPID` of
///   this process): `LockedHint` true → `protectedData` unavailable, false →
///   available; read at start, followed through `PropertiesChanged` (logind
///   sends it when `Lock`/`Unlock` change the hint).
/// - `PrepareForSleep(false)` on the manager: the system woke from sleep;
///   ``onWake`` runs so the time source re-checks the clock and the zone
///   (a wake is a cue, not a kind of its own).
///
/// Loop thread only.
public final class LogindSource {
    /// Runs when the system wakes from sleep.
    public var onWake: () -> Void = {}
    private var watch: DaemonPropertiesWatch?
    private var sleepWatch: DBusSubscription?

    /// Starts following logind on `bus`.
    /// - Parameters:
    ///   - bus: the system bus connection.
    ///   - sessionID: the session to follow (default: `$XDG_SESSION_ID`,
    ///     else the session of this process).
    ///   - post: each event, `initial` for the values read at start.
    ///   - onProblem: why the source has nothing to say, once per occurrence.
    public init(bus: SystemBusConnection, sessionID: String? = ProcessSession.id,
                post: @escaping (SystemEvent, _ initial: Bool) -> Void,
                onProblem: @escaping (String) -> Void) throws(DBusError) {
        let service = "org.freedesktop.login1"
        let manager = "/org/freedesktop/login1"
        let spec = DaemonPropertiesWatch.Spec(
            service: service, interface: "org.freedesktop.login1.Session",
            resolvePath: { bus, done in
                let member = sessionID == nil ? "GetSessionByPID" : "GetSession"
                let argument: DBusArgument = sessionID.map { .string($0) } ?? .uint32(UInt32(getpid()))
                bus.call(destination: service, path: manager, interface: "org.freedesktop.login1.Manager", member: member,
                         arguments: [argument], timeout: .seconds(5)) { reply in
                    done(DaemonPropertiesWatch.objectPath(of: reply, member: member))
                }
            },
            prepare: { _, _, done in done(.success(())) })
        watch = try DaemonPropertiesWatch(bus: bus, spec: spec, onProperties: { properties, initial in
            for event in Self.events(from: properties) { post(event, initial) }
        }, onProblem: onProblem)
        let rule = "type='signal',sender='\(service)',path='\(manager)',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'"
        sleepWatch = try bus.subscribe(match: rule) { [weak self] _, _, values in
            guard values.first?.boolValue == false else { return }  // true: going to sleep
            self?.onWake()
        }
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
