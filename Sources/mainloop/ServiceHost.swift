import ControlSocket
import LinuxSystemEvents
@_spi(Tool) import ServiceKit
import ServiceLogging
import AppLifecycle
import EngineWire
import Glibc
import Logging
import MainLoop
import MainLoopJSON
import SystemBus
import SystemNotifications

/// `mainloop run`'s app: an application with the Linux sources
/// (`LinuxSources`), the control socket answering the standard
/// vocabulary (`ControlResponder`), and every observation recorded.
/// It is one composition of the service parts; build your own from the
/// same parts (docs: "Your own service").
///
/// Every observation (the recorder's shape, with the wall-clock time in
/// `at` as Unix seconds and `time` as ISO 8601) goes to `output`. Create
/// and use it on the loop thread.
final class ServiceHost {
    let loop: MainRunLoop
    let application: Application
    let center: SystemNotificationCenter
    /// The Linux sources (time, locale, defaults, devices) posting into ``center``.
    let sources: LinuxSources
    /// The D-Bus sources (battery, orientation, proximity, protected data),
    /// when ``ServiceOptions/systemBus`` is on; made in ``start()``.
    private(set) var systemBus: SystemBusSources?
    /// The user-defaults store the sources watch.
    var defaults: UserDefaultsStore { sources.defaults }
    /// The control socket's requests, answered for ``application``.
    let responder: ControlResponder
    /// The control socket's server, from ``start()`` on.
    private(set) var control: ControlServer?
    private let options: ServiceOptions
    private let logger: Logger
    private let observer: ObservationRecorder
    /// More counters for a `stats` reply (e.g. the output pump's drops).
    var extraStats: () -> JSONObject {
        get { responder.extraStats }
        set { responder.extraStats = newValue }
    }
    /// The metrics as Prometheus text, for the `metrics` query (set by
    /// whoever collects them, e.g. `MainLoopMetrics`); nil: the query is
    /// answered with an error.
    var metricsText: (() -> String)? {
        get { responder.metricsText }
        set { responder.metricsText = newValue }
    }
    /// The loop instant the service was made at: 0 on a session clock.
    private(set) var sessionOrigin: LoopInstant
    /// Called in ``start()`` after the sources set the system's values and
    /// the socket opened, just before the launch (a session recorder starts there).
    var beforeLaunch: (() throws -> Void)?
    /// The interpreter of the socket's requests.
    var interpreter: RequestInterpreter { responder.interpreter }
    /// Set by the first ``shutdown()``: later calls do nothing.
    private var isShutDown = false

    /// Builds the service (the sources), not yet serving or launched:
    /// ``start()`` opens the socket and launches the app. Each observation
    /// goes to `output` as an object.
    convenience init(options: ServiceOptions, loop: MainRunLoop, logger: Logger,
                            configuration: LifecycleConfiguration = LifecycleConfiguration(),
                            output: @escaping (JSONObject) -> Void) throws {
        let wallClock = WallClockFields()
        try self.init(options: options, loop: loop, logger: logger, configuration: configuration,
                      observer: ObservationRecorder(timestamp: { wallClock.now() }, sink: output))
    }

    /// Builds the service as ``init(options:loop:logger:configuration:output:)``
    /// does, each observation going to `lineOutput` as its compact JSON
    /// text (UTF-8, no newline), written with no object built per line:
    /// what a service printing its observations wants (`mainloop run`
    /// queues them on a `BoundedOutputPump`). The array is reused for the
    /// next line.
    ///
    /// `{ _ in }` as a trailing closure picks the object form: name the
    /// label (`lineOutput: { _ in }`) to choose this one.
    ///
    /// With `sessionClock`, `at` is the loop's instant in seconds since
    /// ``sessionOrigin`` (exact to the nanosecond) and there is no `time`:
    /// the lines a recorded session prints, which its replay prints too.
    @_disfavoredOverload
    convenience init(options: ServiceOptions, loop: MainRunLoop, logger: Logger,
                            configuration: LifecycleConfiguration = LifecycleConfiguration(),
                            sessionClock: Bool = false,
                            lineOutput: @escaping ([UInt8]) -> Void) throws {
        let origin = loop.now
        let timestamp: () -> JSONObject
        if sessionClock {
            let fields = SessionClockFields(loop: loop, origin: origin)
            timestamp = { fields.now() }
        } else {
            let wallClock = WallClockFields()
            timestamp = { wallClock.now() }
        }
        try self.init(options: options, loop: loop, logger: logger, configuration: configuration,
                      observer: ObservationRecorder(timestamp: timestamp, lineSink: lineOutput))
        sessionOrigin = origin
    }

    private init(options: ServiceOptions, loop: MainRunLoop, logger: Logger,
                 configuration: LifecycleConfiguration, observer: ObservationRecorder) throws {
        self.options = options
        self.loop = loop
        sessionOrigin = loop.now
        self.logger = logger
        application = try Application(loop: loop, configuration: configuration, limits: options.limits)
        center = application.notifications
        self.observer = observer
        try observer.attach(to: application)
        sources = try LinuxSources(center: center, logger: logger, settings: options.sourceSettings)
        // The interpreter acts for the recorded app: app actions over the
        // socket print their lines, as a replay's steps do.
        responder = ControlResponder(interpreter: RequestInterpreter(application: application, recorder: observer),
                                     maxReplyBytes: options.maxReplyBytes)
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
    func start() throws {
        guard control == nil else { throw ServiceError.alreadyStarted("ServiceHost.start") }
        sources.setInitialValues()
        if options.systemBus {
            // Before the launch: values read back in time are the baseline.
            let bus = SystemBusSources(center: center, logger: logger)
            bus.onWake = { [sources] in sources.reload() }
            systemBus = bus
        }
        control = try responder.makeServer(adopting: options.inheritedSocket, path: options.socketPath,
                                           mode: options.socketMode, logger: logger, handler: responderHandler,
                                           shortcut: responderShortcut)
        logger.info("service started", metadata: ["socket": "\(options.socketPath)", "defaults": "\(defaults.path)",
                                                  "locale": "\(sources.localeIdentifier)"])
        try beforeLaunch?()
        try application.perform(options.background ? .launchInBackground : .launch)
    }

    /// The server's handler. It holds the responder (and so the
    /// application), as ``ControlResponder/serve(path:mode:passed:logger:)``'s
    /// does: a host released on another thread leaves its server to be
    /// closed on the loop, and until then a request is answered by the
    /// application, which is still there. (It held it weakly once: a weak
    /// load and a release on the slow path of an object with weak
    /// references, for every event line.) No cycle: the responder holds
    /// its server weakly.
    private var responderHandler: (JSONValue) -> JSONObject {
        let responder = responder
        return { request in responder.handle(request) }
    }

    /// The server's line shortcut (``ControlResponder/answer(line:)``),
    /// holding the responder as the handler does.
    private var responderShortcut: (UnsafeBufferPointer<UInt8>) -> JSONObject? {
        let responder = responder
        return { line in responder.answer(line: line) }
    }

    /// Re-reads every source the service watches (the locale and zone
    /// files, a clock set, the defaults file) and posts what changed: for
    /// SIGHUP (reload), and after the process was stopped and continued,
    /// when the file watchers' events may not have been seen yet. Sources
    /// compare with what they last posted, so a change is posted once.
    func reloadSources() { sources.reload() }

    /// One line for a service manager's status: the app's state, what is
    /// held for it, and the socket.
    var statusLine: String {
        let held = application.state == .suspended ? ", \(center.heldSlotCount) notifications held" : ""
        return "app \(application.state.rawValue)\(held); control socket \(options.socketPath)"
    }

    /// Terminates the app if it is running code (willTerminate) or
    /// suspended, and closes the control socket.
    func shutdown() {
        guard !isShutDown else { return }  // a repeated SIGTERM calls it again
        isShutDown = true
        if application.state != .notRunning {
            do { try application.perform(.terminate) } catch { logger.error("terminate at shutdown: \(error)") }
        }
        control?.stop()
        logger.info("service stopped")
    }

    /// Answers one control request (the standard vocabulary, see
    /// ``ControlResponder/handle(_:)``).
    func handle(_ request: JSONValue) -> JSONObject { responder.handle(request) }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension ServiceHost: Sendable {}
