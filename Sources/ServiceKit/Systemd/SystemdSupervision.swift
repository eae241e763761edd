import AppLifecycle
import Glibc
import Logging
import MainLoop
import ServiceLogging

/// Any application under a service manager: the notify protocol
/// (`READY=1` once the service serves, `STATUS=` on every state change
/// after it (the changes before it, such as the launch's, ride on
/// `READY=1`'s own `STATUS=`: one datagram at start-up, not three),
/// `RELOADING=1`/`READY=1` around a SIGHUP reload, `STOPPING=1`) and the
/// watchdog (`WATCHDOG=1` every half period, sent by a timer *on the loop
/// thread*, so a loop blocked in a callback stops the pings and systemd
/// restarts the service, the Linux form of iOS's watchdog).
///
/// Without `$NOTIFY_SOCKET` it still handles SIGHUP as a reload (which
/// would otherwise end the process). A failed notification is logged
/// (rate-limited) and never stops the service. Loop thread only.
public final class SystemdSupervision {
    /// Where notifications go; nil when not started by a service manager.
    public let notifier: SystemdNotifier?
    /// The watchdog request, if any.
    public let watchdog: WatchdogSettings?
    /// `WATCHDOG=1` pings sent.
    public private(set) var watchdogPings = 0
    /// SIGHUP reloads done.
    public private(set) var reloads = 0
    /// Called during a reload, after `reload` (re-read more of your own
    /// configuration here).
    public var onReload: () -> Void = {}

    private let application: Application
    private let statusLine: () -> String
    private let reloadSources: () -> Void
    private let logger: Logger
    private var watchdogTimer: LoopTimer?
    private var hangup: SignalSource?
    private var stateObserver: Int?
    /// Whether ``ready()`` was called: state changes are reported from then on.
    private var isReady = false
    private let failureLog: RateLimitedLog
    /// SIGHUP can come at any rate from any process of the user.
    private let reloadLog: RateLimitedLog

    /// Installs the SIGHUP handler (unless `handlesHangup` is false, as
    /// under a `ServiceGroup`, which owns the signal) and the status
    /// updates; call ``ready()`` once the service serves.
    /// - Parameters:
    ///   - application: the app whose state changes are reported.
    ///   - notifier: where notifications go (``SystemdNotifier/fromEnvironment()``).
    ///   - watchdog: the watchdog request (``WatchdogSettings/fromEnvironment()``).
    ///   - logger: where failed notifications and reloads are logged (rate-limited).
    ///   - handlesHangup: install the SIGHUP handler (reload); false when
    ///     someone else owns the signal.
    ///   - status: the `STATUS=` line (default: the app's state).
    ///   - reload: re-reads what a reload re-reads (e.g. ``LinuxSources/reload()``).
    public init(application: Application, notifier: SystemdNotifier?, watchdog: WatchdogSettings?,
                logger: Logger, handlesHangup: Bool = true,
                status: @escaping () -> String = { "" }, reload: @escaping () -> Void = {}) throws(MainLoopError) {
        self.application = application
        self.notifier = notifier
        self.watchdog = watchdog
        self.logger = logger
        reloadSources = reload
        statusLine = { [unowned application] in
            let line = status()
            return line.isEmpty ? "app \(application.state.rawValue)" : line
        }
        reloadLog = RateLimitedLog(logger: logger, loop: application.loop)
        failureLog = RateLimitedLog(logger: logger, loop: application.loop)
        if handlesHangup {
            hangup = try application.loop.addSignal(SIGHUP) { [weak self] in self?.reload() }
        }
        if notifier != nil {
            stateObserver = application.addEngineObserver { [weak self] event in
                guard case .stateChanged = event, let self, self.isReady else { return }
                self.reportStatus()
            }
        }
    }

    /// `READY=1` with the status, and the watchdog pings start.
    public func ready() {
        isReady = true
        notify { try $0.ready(status: statusLine()) }
        guard let watchdog, notifier != nil, watchdogTimer == nil else { return }
        watchdogTimer = application.loop.scheduleTimer(after: watchdog.pingInterval, repeating: watchdog.pingInterval) {
            [weak self] in self?.ping()
        }
        ping()
        if watchdog.isBelowFloor {
            logger.warning("systemd watchdog: WATCHDOG_USEC asks for a ping every \(watchdog.period / 2); pinging every \(watchdog.pingInterval) instead (the floor)")
        }
        logger.info("systemd watchdog: pinging every \(watchdog.pingInterval) from the loop thread")
    }

    /// `STATUS=` with the status line.
    public func reportStatus() {
        notify { try $0.status(statusLine()) }
    }

    /// Sends one `WATCHDOG=1`.
    private func ping() {
        watchdogPings += 1
        notify { try $0.watchdogPing() }
    }

    /// SIGHUP: `RELOADING=1` (with `MONOTONIC_USEC`), re-read (`reload`,
    /// then ``onReload``), `READY=1`.
    public func reload() {
        notify { try $0.reloading(status: "reloading: re-reading locale, zone, defaults and configuration") }
        reloadLog.log(.info, "SIGHUP: reloading")
        reloadSources()
        onReload()
        reloads += 1
        notify { try $0.ready(status: statusLine()) }
    }

    /// `STOPPING=1`; the watchdog pings stop.
    public func stopping() {
        watchdogTimer?.cancel()
        watchdogTimer = nil
        notify { try $0.stopping(status: "stopping") }
    }

    /// Removes the handler, observer and timer.
    public func remove() {
        watchdogTimer?.cancel()
        watchdogTimer = nil
        if let stateObserver { application.removeEngineObserver(stateObserver) }
        stateObserver = nil
        if let hangup, !hangup.isRemoved {
            do { try hangup.remove() } catch { logger.error("removing the SIGHUP source: \(error)") }
        }
        hangup = nil
    }

    private func notify(_ send: (SystemdNotifier) throws -> Void) {
        guard let notifier else { return }
        do {
            try send(notifier)
        } catch {
            failureLog.log(.warning, "systemd notify: \(error)")
        }
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension SystemdSupervision: Sendable {}
