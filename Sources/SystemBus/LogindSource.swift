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
/// - Sleep: while logind runs, the source holds a delay inhibitor
///   (`Inhibit("sleep", …, "delay")`), so logind waits before suspending.
///   `PrepareForSleep(true)` runs ``onPrepareForSleep``, whose `done`
///   releases the inhibitor (logind suspends then, or at its own limit,
///   `InhibitDelayMaxUSec`); a new one is taken after the wake, and when
///   logind restarts.
///
/// Loop thread only.
public final class LogindSource {
    /// Runs when the system wakes from sleep.
    public var onWake: () -> Void = {}
    /// Runs when the system is about to sleep; call `done` when ready (once).
    public var onPrepareForSleep: (_ done: @escaping () -> Void) -> Void = { $0() }
    /// Whether the delay inhibitor is held now.
    public var holdsSleepDelay: Bool { sleepDelay >= 0 }
    private var watch: DaemonPropertiesWatch?
    private let bus: SystemBusConnection
    private let timeout: Duration
    private let onProblem: (String) -> Void
    /// The inhibitor's descriptor (logind waits while it is open), or -1.
    private var sleepDelay: Int32 = -1
    /// Asked for and not answered yet.
    private var sleepDelayRequested = false
    /// Each PrepareForSleep(true) and its `done`: a `done` from before a
    /// wake must not release the inhibitor taken after it.
    private var sleepGeneration = 0
    static let service = "org.freedesktop.login1"
    static let manager = "/org/freedesktop/login1"

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
        let service = Self.service
        let manager = Self.manager
        self.bus = bus
        self.timeout = timeout
        self.onProblem = onProblem
        post(.protectedData(available: false), true)
        var spec = DaemonPropertiesWatch.Spec(
            service: service, interface: "org.freedesktop.login1.Session", schema: Self.schema,
            resolvePath: { [weak self] bus, owner, timeout, done in
                // logind is there (again): the sleep delay does not depend on a session.
                self?.takeSleepDelay()
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
            switch going {
            case true: self?.prepareForSleep()
            case false: self?.woke()
            default: break
            }
        }]
        watch = try DaemonPropertiesWatch(bus: bus, spec: spec, timeout: timeout, onProperties: { properties, initial in
            for event in Self.events(from: properties) { post(event, initial) }
        }, onProblem: onProblem, onAbsent: { [weak self] left in
            // Not there at start: no lock service on this system. Gone: unknown, so closed.
            post(.protectedData(available: !left), !left)
            self?.releaseSleepDelay()
        })
    }

    deinit { releaseSleepDelay() }

    private func prepareForSleep() {
        sleepGeneration += 1
        let generation = sleepGeneration
        var called = false
        onPrepareForSleep { [weak self] in
            guard !called, let self, generation == sleepGeneration else { return }
            called = true
            releaseSleepDelay()
        }
    }

    private func woke() {
        sleepGeneration += 1
        takeSleepDelay()
        onWake()
    }

    /// Asks logind for a delay inhibitor, unless one is held or asked for.
    private func takeSleepDelay() {
        guard sleepDelay < 0, !sleepDelayRequested else { return }
        sleepDelayRequested = true
        bus.call(destination: Self.service, path: Self.manager, interface: "org.freedesktop.login1.Manager", member: "Inhibit",
                 arguments: [.string("sleep"), .string("MainLoop"),
                             .string("the app goes to the background before the system sleeps"), .string("delay")],
                 timeout: timeout) { [weak self] reply in
            guard let self else { return }
            sleepDelayRequested = false
            let descriptor: Int32
            do {
                guard case .unixFD(let received)? = try reply.get().values(expecting: "h").first else {
                    return onProblem("no sleep delay: logind's reply carries no descriptor")
                }
                // The message owns the descriptor it carries: keep a copy.
                descriptor = fcntl(received, F_DUPFD_CLOEXEC, 3)
                guard descriptor >= 0 else { return onProblem("no sleep delay: dup failed (errno \(errno))") }
            } catch {
                return onProblem("no sleep delay: \(error)")
            }
            if sleepDelay >= 0 { close(descriptor) } else { sleepDelay = descriptor }
        }
    }

    /// Lets logind go on to sleep (closing the inhibitor's descriptor).
    private func releaseSleepDelay() {
        guard sleepDelay >= 0 else { return }
        close(sleepDelay)
        sleepDelay = -1
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
