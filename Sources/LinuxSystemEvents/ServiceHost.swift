import AppLifecycle
import EngineWire
import Glibc
import Logging
import MainLoop
import MainLoopJSON
import SystemNotifications

/// A real service on the real loop: the application lifecycle, the system
/// notification center, the Linux sources (time, locale, user defaults)
/// and the control socket through which a supervisor drives it.
///
/// Every observation (SPEC §7 shape, with the wall-clock time in `at` as
/// Unix seconds and `time` as ISO 8601) goes to `output`. Create and use it
/// on the loop thread.
public final class ServiceHost {
    public let loop: MainRunLoop
    public let application: Application
    public let center: SystemNotificationCenter
    public let defaults: UserDefaultsStore
    /// The control socket's server, from ``start()`` on.
    public private(set) var control: ControlServer?
    private let options: ServiceOptions
    private let logger: Logger
    private let observer: ObservationRecorder
    private let watcher: FileWatcher
    private var timeSource: SignificantTimeChangeSource!
    private var localeSource: LocaleSource!
    private var defaultsMonitor: UserDefaultsMonitor!
    /// More counters for a `stats` reply (e.g. the output pump's drops).
    public var extraStats: () -> JSONObject = { JSONObject() }
    /// The metrics as Prometheus text, for the `metrics` query (set by
    /// whoever collects them, e.g. `MainLoopMetrics`); nil: the query is
    /// answered with an error.
    public var metricsText: (() -> String)?
    /// Set by the first ``shutdown()``: later calls do nothing.
    private var isShutDown = false
    private let wallClock: SystemWallClock
    /// Events the center refused (over a limit, malformed): a file or a
    /// client can produce them at any rate, so the log is rate-limited.
    private let refusedEventLog: RateLimitedLog
    /// Watched files that cannot be read or watched now.
    private let sourceProblemLog: RateLimitedLog

    /// Builds the service (the sources), not yet serving or launched:
    /// ``start()`` opens the socket and launches the app.
    public init(options: ServiceOptions, loop: MainRunLoop, logger: Logger,
                configuration: LifecycleConfiguration = LifecycleConfiguration(),
                output: @escaping (JSONObject) -> Void) throws {
        self.options = options
        self.loop = loop
        self.logger = logger
        wallClock = SystemWallClock(localtimePath: options.zoneFiles.first ?? "/etc/localtime")
        application = Application(loop: loop, configuration: configuration, limits: options.limits)
        center = application.notifications
        observer = ObservationRecorder(timestamp: { ServiceHost.wallClockFields() }, sink: output)
        try observer.attach(to: application)
        watcher = try FileWatcher(loop: loop)
        if let file = options.defaultsFile {
            defaults = UserDefaultsStore(path: file)
        } else {
            defaults = try UserDefaultsStore(domain: options.domain)
        }
        defaults.maxFileBytes = options.maxDefaultsFileBytes
        let center = self.center
        let refusedEventLog = RateLimitedLog(logger: logger, loop: loop)
        let sourceProblemLog = RateLimitedLog(logger: logger, loop: loop)
        self.refusedEventLog = refusedEventLog
        self.sourceProblemLog = sourceProblemLog
        let post: (SystemEvent) -> Void = { event in
            do { try center.post(event) } catch { refusedEventLog.log(.error, "cannot post \(event.kind): \(error)") }
        }
        timeSource = try SignificantTimeChangeSource(loop: loop, clock: wallClock, watcher: watcher,
                                                     zoneFiles: options.zoneFiles, detectClockSet: options.detectClockSet,
                                                     onProblem: { sourceProblemLog.log(.warning, $0) }, post: post)
        localeSource = try LocaleSource(path: options.localeFile, watcher: watcher,
                                        onProblem: { sourceProblemLog.log(.warning, "locale: \($0); keeping the last locale read") },
                                        post: post)
        defaultsMonitor = try UserDefaultsMonitor(store: defaults, watcher: watcher, post: post) { error in
            sourceProblemLog.log(.error, "\(error)")
        }
    }

    /// Sets the system's current values from the sources, opens the control
    /// socket (binds it, or serves the inherited one) and launches the app
    /// (`launchInBackground` with `background`).
    ///
    /// The socket appears only here, so whatever the caller sets up between
    /// `init` and `start()` (signal handlers, a supervisor link) is in place
    /// before a client can reach the service.
    /// - Throws: when the socket cannot be opened (nothing is launched then),
    ///   or on a second call.
    public func start() throws {
        guard control == nil else { throw MainLoopError.system(operation: "ServiceHost.start called twice", errno: EALREADY) }
        // What other processes left in the files may be over the limits: such
        // a value is refused and counted exactly as at run time, and the
        // service starts with the rest.
        for event in [.locale(localeSource.identifier)] + defaultsMonitor.initialEvents {
            do {
                try center.setInitialValue(event)
            } catch {
                refusedEventLog.log(.error, "initial \(event.kind) value refused: \(error)")
            }
        }
        // Weak: a host released on another thread is gone before its
        // server's cleanup runs on the loop; a request in between is refused.
        let handler: (JSONValue) -> JSONObject = { [weak self] request in
            self?.handle(request) ?? EngineQueries.error("the service is shutting down")
        }
        if let inherited = options.inheritedSocket {
            control = try ControlServer(loop: loop, adopting: inherited, path: options.socketPath, logger: logger,
                                        handler: handler)
        } else {
            control = try ControlServer(loop: loop, path: options.socketPath, mode: options.socketMode, logger: logger,
                                        handler: handler)
        }
        logger.info("service started", metadata: ["socket": "\(options.socketPath)", "defaults": "\(defaults.path)",
                                                  "locale": "\(localeSource.identifier)"])
        try application.perform(options.background ? .launchInBackground : .launch)
    }

    /// Re-reads every source the service watches (the locale and zone
    /// files, a clock set, the defaults file) and posts what changed: for
    /// SIGHUP (reload), and after the process was stopped and continued,
    /// when the file watchers' events may not have been seen yet. Sources
    /// compare with what they last posted, so a change is posted once.
    public func reloadSources() {
        localeSource.reload()
        timeSource.recheck()
        defaultsMonitor.reload()
    }

    /// One line for a service manager's status: the app's state, what is
    /// held for it, and the socket.
    public var statusLine: String {
        let held = application.state == .suspended ? ", \(center.heldSlotCount) notifications held" : ""
        return "app \(application.state.rawValue)\(held); control socket \(options.socketPath)"
    }

    /// Terminates the app if it is running code (willTerminate) or
    /// suspended, and closes the control socket.
    public func shutdown() {
        guard !isShutDown else { return }  // a repeated SIGTERM calls it again
        isShutDown = true
        if application.state != .notRunning {
            do { try application.perform(.terminate) } catch { logger.error("terminate at shutdown: \(error)") }
        }
        control?.stop()
        logger.info("service stopped")
    }

    /// Answers one control request (SPEC §6 vocabulary without `at`, plus
    /// queries). Never throws: every problem becomes an error reply. The
    /// request takes effect before the reply is made: `ok` means applied.
    public func handle(_ request: JSONValue) -> JSONObject {
        guard let object = request.objectValue else {
            return EngineQueries.error("a request is a JSON object with exactly one of lifecycle, system, input, query")
        }
        let decoded: EngineRequest
        do {
            decoded = try RequestDecoder.decode(object, context: .controlSocket)
        } catch {
            return EngineQueries.error(error.problem)
        }
        switch decoded {
        case .lifecycle(let command):
            do {
                try application.perform(command)
                return ["ok": true, "state": .string(application.state.rawValue)]
            } catch {
                return EngineQueries.error(error.description)
            }
        case .system(let json):
            do {
                try center.post(try center.decodeEvent(json))
                return ["ok": true]
            } catch {
                return EngineQueries.error("\(error)")
            }
        case .input(let id):
            do {
                let discardedBefore = application.discardedInputCount
                try application.deliverInput(id)
                guard application.discardedInputCount == discardedBefore else {
                    // Accepted and applied, but the app was not active: say so.
                    return ["ok": true, "discarded": true,
                            "reason": .string("the app is \(application.state.rawValue); input reaches only an active app")]
                }
                return ["ok": true]
            } catch {
                return EngineQueries.error("\(error)")
            }
        case .query(.metrics):
            guard let metricsText else { return EngineQueries.reply(.metrics, application: application) }
            let text = metricsText()
            guard text.utf8.count <= options.maxReplyBytes else {
                return EngineQueries.error("the metrics text would be \(text.utf8.count) bytes, over the limit of \(options.maxReplyBytes)")
            }
            return ["ok": true, "text": .string(text)]
        case .query(let query):
            let reply = EngineQueries.reply(query, application: application, extraStats: controlStats())
            let size = JSONValue.object(reply).jsonText.utf8.count
            guard size <= options.maxReplyBytes else {
                return EngineQueries.error("the '\(query.rawValue)' reply would be \(size) bytes, over the limit of \(options.maxReplyBytes)")
            }
            return reply
        case .app:
            return EngineQueries.error("'app' actions are scenario steps, not control requests")
        }
    }

    /// The control socket's counters, for a `stats` reply.
    private func controlStats() -> JSONObject {
        var stats = JSONObject()
        if let control {
            stats = ["refusedPeers": .number(Double(control.refusedPeers)),
                     "malformedRequests": .number(Double(control.malformedRequests)),
                     "acceptFailures": .number(Double(control.acceptFailures)),
                     "idleClosed": .number(Double(control.idleClosed)),
                     "evicted": .number(Double(control.evicted))]
        }
        for (key, value) in extraStats() { stats[key] = value }
        return stats
    }

    /// `at` (Unix seconds) and `time` (ISO 8601, UTC, milliseconds).
    static func wallClockFields() -> JSONObject {
        let (at, iso) = UTCTimestamp.now()
        return ["at": .number(at), "time": .string(iso)]
    }
}
