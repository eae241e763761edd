import AppLifecycle
import Glibc
import Logging
import MainLoop

/// The wiring every Linux service on MainLoop needs, around your own
/// application: SIGTERM and SIGINT end it cleanly (willTerminate once, if
/// the app runs code), systemd's notify protocol and watchdog
/// (``SystemdSupervision``, SIGHUP as a reload), Ctrl-Z and `fg` as the
/// home button and the app switcher (``JobControl``), memory pressure as
/// the memory warning (``MemoryPressureMonitor``), and an exit in which a
/// repeated signal cannot turn a clean exit into 143.
///
/// ```swift
/// let runner = try ServiceRunner(application: application, logger: logger)
/// runner.onReload = { sources.reload() }     // SIGHUP, and after SIGCONT
/// try application.perform(.launch)
/// try runner.run()                           // READY=1, the loop, the clean exit
/// ```
///
/// Create it before your service can be reached (before the control
/// socket opens): a supervisor that sees the socket may signal at once.
/// `mainloop run` is this runner around its own app (`ServiceHost`, in the tool); the template
/// service in Examples/ is this runner around an app of its own.
/// Main loop thread only (it handles the process's signals).
public final class ServiceRunner {
    /// What the runner takes care of.
    public struct Configuration: Sendable {
        /// Handle SIGTERM and SIGINT (stop) and SIGHUP (reload). False when
        /// someone else owns them, as a `ServiceGroup` does.
        public var handlesSignals: Bool
        /// Handle SIGTSTP/SIGCONT as suspension (needs ``handlesSignals``).
        public var jobControl: Bool
        /// Purge a suspended app after this much sustained memory pressure;
        /// nil: memory pressure is not watched.
        public var memoryPressurePurgeAfter: Duration?

        /// Everything on; a purge after 10 s of pressure while suspended.
        public init(handlesSignals: Bool = true, jobControl: Bool = true,
                    memoryPressurePurgeAfter: Duration? = .seconds(10)) {
            self.handlesSignals = handlesSignals
            self.jobControl = jobControl
            self.memoryPressurePurgeAfter = memoryPressurePurgeAfter
        }
    }

    /// The application run.
    public let application: Application
    /// systemd's notify protocol and watchdog (inert without `$NOTIFY_SOCKET`).
    public let supervision: SystemdSupervision
    /// Ctrl-Z/`fg`, when configured.
    public let jobControl: JobControl?
    /// The memory-pressure watch, when configured and available.
    public let memoryPressure: MemoryPressureMonitor?
    /// Re-reads what a reload re-reads (your sources, your configuration):
    /// on SIGHUP and after SIGCONT.
    public var onReload: () -> Void = {}
    /// The `STATUS=` line for the service manager (default: the app's state).
    public var status: () -> String = { "" }
    /// Called by ``stop()`` after `STOPPING=1`, before the app terminates
    /// and the loop stops (close your own resources here).
    public var onStop: () -> Void = {}

    private let logger: Logger
    private var signalSources: [SignalSource] = []
    private var isStopped = false

    /// Installs the handlers. Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC`/`$WATCHDOG_PID`
    /// and `$MEMORY_PRESSURE_WATCH`/`$MEMORY_PRESSURE_WRITE` (and removes
    /// none of them).
    /// - Throws: on a malformed variable, on a signal someone else owns,
    ///   or when a memory-pressure watch the environment asked for cannot be
    ///   set up (one discovered on its own that cannot is a warning).
    public init(application: Application, logger: Logger, configuration: Configuration = Configuration()) throws {
        self.application = application
        self.logger = logger
        let loop = application.loop
        // The closures reach the runner weakly: it owns them.
        weak var weakSelf: ServiceRunner?
        supervision = try SystemdSupervision(application: application, notifier: try SystemdNotifier.fromEnvironment(),
                                             watchdog: try WatchdogSettings.fromEnvironment(), logger: logger,
                                             handlesHangup: configuration.handlesSignals,
                                             status: { weakSelf?.status() ?? "" },
                                             reload: { weakSelf?.onReload() })
        if configuration.jobControl && configuration.handlesSignals {
            jobControl = try JobControl(application: application, logger: logger, reload: { weakSelf?.onReload() })
        } else {
            jobControl = nil
        }
        if let purgeAfter = configuration.memoryPressurePurgeAfter {
            memoryPressure = try Self.watchMemoryPressure(application, purgeAfter: purgeAfter, logger: logger)
        } else {
            memoryPressure = nil
        }
        weakSelf = self
        if configuration.handlesSignals {
            for number in [SIGTERM, SIGINT] {
                signalSources.append(try loop.addSignal(number) { weakSelf?.stop() })
            }
        }
    }

    /// `READY=1` (the watchdog pings start), runs the loop until ``stop()``,
    /// then removes the handlers (``finish()``).
    public func run() throws {
        supervision.ready()
        try application.loop.run()
        try finish()
    }

    /// Ends the service: `STOPPING=1`, ``onStop``, willTerminate (if the
    /// app runs code or is suspended), and the loop stops. A second call
    /// does nothing (a repeated SIGTERM).
    public func stop() {
        guard !isStopped else { return }
        isStopped = true
        supervision.stopping()
        onStop()
        if application.state != .notRunning {
            do { try application.perform(.terminate) } catch { logger.error("terminate at shutdown: \(error)") }
        }
        application.loop.stop()
    }

    /// Removes every handler the runner installed. From here on the process
    /// is exiting: a repeated SIGTERM or SIGINT must not end it with 143 or
    /// 130 (nor SIGHUP with 129, nor SIGTSTP stop it), so those signals are
    /// ignored from now on. Called by ``run()``; call it yourself if you run
    /// the loop yourself. Threads of your own must block SIGTERM and
    /// SIGINT, as MainLoop's helper threads and libdispatch's do: start them
    /// inside ``ServiceSignals/blockingSignals(_:in:)``. A signal the kernel
    /// hands such a thread while the handlers are removed would end the
    /// process with the default action.
    public func finish() throws {
        memoryPressure?.stop()
        try Self.ignoreWhileExiting([SIGTERM, SIGINT, SIGHUP, SIGTSTP]) {
            for source in signalSources where !source.isRemoved { try source.remove() }
            signalSources = []
            jobControl?.remove()
            supervision.remove()
        }
    }

    /// Watches memory pressure where systemd's variables say, or the
    /// cgroup's or the system's PSI file. A watch the environment asked for
    /// that cannot be set up is an error; a discovered one that cannot is
    /// a warning (a kernel or container without PSI triggers).
    static func watchMemoryPressure(_ application: Application, purgeAfter: Duration,
                                    logger: Logger) throws -> MemoryPressureMonitor? {
        let settings = try MemoryPressureSettings.fromEnvironment()
        guard settings.watchPath != nil else {
            logger.info("memory pressure: not watched (MEMORY_PRESSURE_WATCH=/dev/null or no PSI on this kernel)")
            return nil
        }
        do {
            let monitor = try MemoryPressureMonitor(application: application, settings: settings,
                                                    purgeAfter: purgeAfter, logger: logger)
            logger.info("memory pressure: watching \(monitor.path)")
            return monitor
        } catch {
            guard getenv("MEMORY_PRESSURE_WATCH") == nil else { throw error }
            logger.warning("memory pressure: not watched: \(error)")
            return nil
        }
    }

    /// Removing a libevent signal source restores the default action, so
    /// the signals are blocked on this thread, handed back by
    /// `removeSources`, set to be ignored (which discards one pending
    /// meanwhile), and unblocked. This thread must be the only one that
    /// can take them then: libdispatch's threads block them, and so do the
    /// helper threads MainLoop starts (`HelperThread`). A thread of the
    /// app's own that does not block them could take one in that window
    /// and end the process with the default action.
    static func ignoreWhileExiting(_ signals: [Int32], removeSources: () throws -> Void) throws {
        var exiting = sigset_t()
        sigemptyset(&exiting)
        for number in signals { sigaddset(&exiting, number) }
        pthread_sigmask(SIG_BLOCK, &exiting, nil)
        defer {
            for number in signals { signal(number, SIG_IGN) }
            pthread_sigmask(SIG_UNBLOCK, &exiting, nil)
        }
        try removeSources()
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension ServiceRunner: Sendable {}
