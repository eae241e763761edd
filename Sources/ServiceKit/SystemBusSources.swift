import AppLifecycle
import Logging
import MainLoop
import ServiceLogging
import SystemBus
import SystemNotifications

/// The D-Bus sources as one part for any application's center: battery
/// level and state (UPower), orientation and proximity (iio-sensor-proxy),
/// protected data and wake-ups (logind), each posting into `center` so
/// holding, merging and accounting work as for any other event.
///
/// ```swift
/// let bus = SystemBusSources(center: application.notifications, logger: logger)
/// bus.onWake = { sources.reload() }    // after sleep: re-check the clock and the zone
/// ```
///
/// No system bus, or a daemon that is not running, turns that source off
/// with one logged reason (and a daemon that appears later is picked up);
/// it is never an error that stops the service. The values read at start
/// are the baseline (set, not posted) while the app is not running, and
/// changes from then on. Loop thread only; keep it as long as the sources
/// should run.
public final class SystemBusSources {
    /// The connection, when a system bus was reachable.
    public private(set) var connection: SystemBusConnection?
    /// Why there are no D-Bus sources, when there are none.
    public private(set) var unavailableReason: String?
    /// Runs when the system wakes from sleep (logind's `PrepareForSleep(false)`).
    public var onWake: () -> Void = {}

    private var upower: UPowerSource?
    private var sensors: SensorProxySource?
    private var logind: LogindSource?

    /// Connects to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the
    /// standard socket; `address` when given) and starts the three sources.
    /// - Parameters:
    ///   - center: the center the sources post into.
    ///   - logger: where problems are logged (rate-limited) and the bus's absence, once.
    ///   - address: a bus address (default: the system bus).
    ///   - sessionID: the logind session whose lock state is protected data
    ///     (default: `$XDG_SESSION_ID`, else this process's session).
    public init(center: SystemNotificationCenter, logger: Logger, address: String? = nil,
                sessionID: String? = ProcessSession.id) {
        let loop = center.application.loop
        let problems = RateLimitedLog(logger: logger, loop: loop)
        let refused = RateLimitedLog(logger: logger, loop: loop)
        let connection: SystemBusConnection
        do {
            connection = try SystemBusConnection(loop: loop, address: address)
        } catch {
            if case .libraryUnavailable = error {
                // A bus may well be there: the error says sd-bus is missing.
                unavailableReason = error.description
                logger.warning("D-Bus sources off: \(error)")
            } else {
                unavailableReason = "no system bus: \(error)"
                logger.info("D-Bus sources off: \(error)")
            }
            return
        }
        self.connection = connection
        connection.onDisconnect = { error in problems.log(.warning, "D-Bus sources off: the bus went away (\(error))") }
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
            upower = try UPowerSource(bus: connection, post: post) { problems.log(.info, "battery: \($0)") }
            sensors = try SensorProxySource(bus: connection, post: post) { problems.log(.info, "orientation/proximity: \($0)") }
            logind = try LogindSource(bus: connection, sessionID: sessionID, post: post) {
                problems.log(.info, "protected data: \($0)")
            }
            logind?.onWake = { [weak self] in self?.onWake() }
        } catch {
            unavailableReason = "cannot subscribe on the system bus: \(error)"
            logger.warning("D-Bus sources off: \(error)")
        }
        logger.info("D-Bus sources on \(connection.address)")
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension SystemBusSources: Sendable {}
