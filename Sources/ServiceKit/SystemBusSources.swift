import AppLifecycle
import Logging
import MainLoop
import ServiceLogging
import SystemBus
import SystemNotifications

/// The D-Bus sources as one part for any application's center: battery
/// level and state (UPower), orientation and proximity (iio-sensor-proxy),
/// protected data and wake-ups (logind), low power mode
/// (power-profiles-daemon) and the network path (NetworkManager), each
/// posting into `center` so
/// holding, merging and accounting work as for any other event; memory
/// warnings from low-memory-monitor where it runs, delivered to the
/// center's application as `receiveMemoryWarning()`; and sleep: a foreground
/// app goes to the background before the system sleeps (logind waits for
/// it, up to ``sleepLimit``) and comes back after the wake.
///
/// ```swift
/// let bus = SystemBusSources(center: application.notifications, logger: logger)
/// bus.onWake = { sources.reload() }    // after sleep: re-check the clock and the zone
/// ```
///
/// The system bus is shared with every local user, so the sources trust
/// no one but each daemon: a value is taken only from the connection that
/// owns the daemon's well-known name now (which the bus's policy keeps to
/// root), from broadcast signals and replies to calls made to it, read
/// within ``/SystemBus/DBusReadLimits`` and checked against the source's
/// schema. Anyone else's signals are dropped unread.
///
/// No system bus, or a daemon that is not running, turns that source off
/// with one logged reason (and a daemon that appears later is picked up);
/// it is never an error that stops the service. A call a daemon does not
/// answer in time is tried again (1 s, doubling up to 30 s). A bus that
/// goes away is connected to again on the same schedule, and the sources
/// start over on it; meanwhile protected data is unavailable. The values
/// read at start are the baseline (set, not posted) while the app is not
/// running, and changes from then on. Loop thread only; keep it as long as
/// the sources should run.
public final class SystemBusSources {
    /// The connection, while one is open.
    public private(set) var connection: SystemBusConnection?
    /// Why there are no D-Bus sources, when there are none.
    public private(set) var unavailableReason: String?
    /// Runs when the system wakes from sleep (logind's `PrepareForSleep(false)`),
    /// at most once every ``wakeInterval``: a wake that comes sooner runs it
    /// once at the end of the interval.
    public var onWake: () -> Void = {}
    /// Runs with each low-memory-monitor warning's level (50 low, 100
    /// medium, 255 critical), after the application received the warning.
    public var onLowMemoryWarning: (UInt8) -> Void = { _ in }
    /// How long, at most, the system's sleep waits for the app once logind
    /// announced it (`PrepareForSleep(true)`): below logind's own default
    /// limit (`InhibitDelayMaxSec`, 5 s).
    public var sleepLimit = Duration.seconds(4)
    /// Whether the sources hold logind's sleep delay now.
    public var holdsSleepDelay: Bool { logind?.holdsSleepDelay ?? false }
    /// The shortest time between two runs of ``onWake``.
    public static let wakeInterval = Duration.seconds(1)
    /// How many times the bus was connected to again after it went away.
    public private(set) var reconnections = 0
    /// Runs with every problem a source meets (a daemon not running or not
    /// answering, a message refused), before the rate-limited log: for a
    /// caller's own counters or tests.
    public var onProblem: (String) -> Void = { _ in }

    private let center: SystemNotificationCenter
    private let logger: Logger
    private let address: String?
    private let sessionID: String?
    private let callTimeout: Duration
    private let problems: RateLimitedLog
    private let refused: RateLimitedLog
    private var upower: UPowerSource?
    private var sensors: SensorProxySource?
    private var logind: LogindSource?
    private var powerProfiles: PowerProfilesSource?
    private var networkManager: NetworkManagerSource?
    private var lowMemoryMonitor: LowMemoryMonitorSource?
    private var reconnectTimer: LoopTimer?
    private var reconnectDelay = firstReconnect
    private static let firstReconnect = Duration.seconds(1)
    private static let longestReconnect = Duration.seconds(30)
    private var wakeTimer: LoopTimer?
    private var lastWake: LoopInstant?
    /// The sleep in preparation: when it was announced, and logind's `done`.
    private var sleep: (announced: LoopInstant, done: () -> Void)?
    /// The app the sleep sent home: the wake brings it back.
    private var sentHomeBySleep = SentHome()
    private var sleepCheckTimer: LoopTimer?

    /// Connects to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the
    /// standard socket; `address` when given) and starts the sources.
    /// - Parameters:
    ///   - center: the center the sources post into.
    ///   - logger: where problems are logged (rate-limited) and the bus's absence, once.
    ///   - address: a bus address (default: the system bus).
    ///   - sessionID: the logind session whose lock state is protected data
    ///     (default: `$XDG_SESSION_ID`, else this process's session).
    ///   - callTimeout: how long a call waits for a daemon before it is
    ///     tried again.
    public init(center: SystemNotificationCenter, logger: Logger, address: String? = nil,
                sessionID: String? = ProcessSession.id, callTimeout: Duration = .seconds(5)) {
        let loop = center.application.loop
        self.center = center
        self.logger = logger
        self.address = address
        self.sessionID = sessionID
        self.callTimeout = callTimeout
        problems = RateLimitedLog(logger: logger, loop: loop)
        refused = RateLimitedLog(logger: logger, loop: loop)
        // Weak: the part may be released on any thread, where its timers
        // cannot be cancelled; one still scheduled then fires once, for no one.
        reconnectTimer = loop.makeTimer { [weak self] in self?.reconnect() }
        wakeTimer = loop.makeTimer { [weak self] in self?.runWake() }
        sleepCheckTimer = loop.makeTimer { [weak self] in self?.checkSleepReady() }
        do {
            try connect()
        } catch {
            if case .libraryUnavailable = error {
                // A bus may well be there: the error says sd-bus is missing.
                unavailableReason = error.description
                logger.warning("D-Bus sources off: \(error)")
            } else {
                unavailableReason = "no system bus: \(error)"
                logger.info("D-Bus sources off: \(error)")
            }
        }
    }

    /// Opens the connection and starts the sources on it.
    private func connect() throws(DBusError) {
        let connection = try SystemBusConnection(loop: center.application.loop, address: address)
        self.connection = connection
        connection.onDisconnect = { [weak self] error in self?.lost(error) }
        let center = center, refused = refused
        let problem: (String) -> Void = { [weak self] text in
            self?.onProblem(text)
            self?.problems.log(.info, text)
        }
        // A value read at start while the app is not running is the
        // baseline; everything else is a change.
        let post: (SystemEvent, Bool) -> Void = { event, initial in
            do {
                if initial { try center.postOrSetBaseline(event) } else { try center.post(event) }
            } catch {
                refused.log(.error, "cannot post \(event.kind) from D-Bus: \(error)")
            }
        }
        do {
            upower = try UPowerSource(bus: connection, timeout: callTimeout, post: post) { problem("battery: \($0)") }
            sensors = try SensorProxySource(bus: connection, timeout: callTimeout, post: post) { problem("orientation/proximity: \($0)") }
            logind = try LogindSource(bus: connection, sessionID: sessionID, timeout: callTimeout, post: post) {
                problem("protected data: \($0)")
            }
            logind?.onWake = { [weak self] in self?.wake() }
            logind?.onPrepareForSleep = { [weak self] done in
                guard let self else { return done() }
                prepareForSleep(done)
            }
            powerProfiles = try PowerProfilesSource(bus: connection, timeout: callTimeout, post: post) {
                problem("low power mode: \($0)")
            }
            networkManager = try NetworkManagerSource(bus: connection, timeout: callTimeout, post: post) {
                problem("network path: \($0)")
            }
            lowMemoryMonitor = try LowMemoryMonitorSource(bus: connection, timeout: callTimeout, onWarning: { [weak self] level in
                self?.lowMemoryWarning(level)
            }) { problem("memory warnings: \($0)") }
        } catch {
            unavailableReason = "cannot subscribe on the system bus: \(error)"
            logger.warning("D-Bus sources off: \(error)")
        }
        logger.info("D-Bus sources on \(connection.address)")
    }

    /// The bus went away: the sources stop, protected data closes, and the
    /// bus is connected to again later.
    private func lost(_ error: DBusError) {
        let text = "D-Bus sources off: the bus went away (\(error)); connecting again in \(reconnectDelay)"
        onProblem(text)
        problems.log(.warning, text)
        stopSources()
        do {
            try center.post(.protectedData(available: false))
        } catch {
            refused.log(.error, "cannot post protectedData after the bus went away: \(error)")
        }
        reconnectTimer?.schedule(after: reconnectDelay)
    }

    private func stopSources() {
        upower = nil
        sensors = nil
        logind = nil
        powerProfiles = nil
        networkManager = nil
        lowMemoryMonitor = nil
        connection = nil
    }

    /// low-memory-monitor warned: the application's memory warning.
    private func lowMemoryWarning(_ level: UInt8) {
        do {
            try center.application.receiveMemoryWarning()
        } catch {
            refused.log(.error, "memory warning from low-memory-monitor not delivered: \(error)")
        }
        onLowMemoryWarning(level)
    }

    private func reconnect() {
        do {
            try connect()
            reconnections += 1
            reconnectDelay = Self.firstReconnect
            unavailableReason = nil
        } catch {
            stopSources()
            reconnectDelay = min(reconnectDelay * 2, Self.longestReconnect)
            let text = "the system bus is still away (\(error)); connecting again in \(reconnectDelay)"
            onProblem(text)
            problems.log(.info, text)
            reconnectTimer?.schedule(after: reconnectDelay)
        }
    }

    /// The system is about to sleep: a running scheduled task's expiration
    /// handler runs, an app that runs in the foreground goes to the
    /// background (its `didEnterBackground` runs), and logind may go on
    /// once the app is suspended (its background work ended) or at
    /// ``sleepLimit``.
    private func prepareForSleep(_ done: @escaping () -> Void) {
        let application = center.application
        application.expireRunningScheduledTask()
        do {
            try sentHomeBySleep.sendHome(application)
        } catch {
            refused.log(.error, "the app could not go to the background before sleep: \(error)")
        }
        sleep = (application.loop.now, done)
        checkSleepReady()
    }

    /// Lets logind sleep once the app is no longer running in the
    /// background, or the limit has passed; else looks again soon.
    private func checkSleepReady() {
        guard let (announced, done) = sleep else { return }
        let loop = center.application.loop
        if center.application.state != .background || loop.now - announced >= sleepLimit {
            sleep = nil
            _ = sleepCheckTimer?.cancel()
            done()
        } else {
            sleepCheckTimer?.schedule(after: min(.milliseconds(50), sleepLimit - (loop.now - announced)))
        }
    }

    /// logind said the system woke: the app comes back if the sleep sent it
    /// home, and ``onWake`` runs now, or at the end of the interval when it
    /// ran less than ``wakeInterval`` ago.
    private func wake() {
        // The sleep is over (logind did not wait, or we were late).
        if let (_, done) = sleep {
            sleep = nil
            _ = sleepCheckTimer?.cancel()
            done()
        }
        do {
            try sentHomeBySleep.bringBack(center.application)
        } catch {
            refused.log(.error, "the app could not come back after sleep: \(error)")
        }
        let loop = center.application.loop
        guard wakeTimer?.isScheduled == false else { return }  // one is due already
        if let lastWake, loop.now < lastWake.advanced(by: Self.wakeInterval) {
            wakeTimer?.schedule(at: lastWake.advanced(by: Self.wakeInterval))
        } else {
            runWake()
        }
    }

    private func runWake() {
        lastWake = center.application.loop.now
        onWake()
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension SystemBusSources: Sendable {}
