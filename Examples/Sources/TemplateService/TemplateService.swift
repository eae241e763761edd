// A template for your own Linux service on MainLoop: copy this file and
// Examples/Package.swift's `template-service` target, rename, and replace
// the app's own work. It uses only public API, through `import MainLoopKit`
// plus the opt-in products it needs (MainLoopMetrics and swift-prometheus
// for the `metrics` query).
//
// What it has, part by part (docs: "Your own service"):
// - its own app: a @MainActor delegate (MainActorApplicationDelegate) and a
//   @MainActor observer on the main thread's loop, MainRunLoop.main;
// - a @MainActor task sleeping on the loop's clock (gated while suspended);
// - the Linux sources (clock, zone, locale file, defaults file, devices):
//   LinuxSources; the system daemons (battery, sensors, lock): SystemBusSources;
// - the control socket speaking the standard vocabulary, so `mainloop ctl`
//   drives it (ControlResponder), bound at --socket or passed by systemd;
// - systemd notify and watchdog, SIGHUP reload, Ctrl-Z/fg, memory pressure
//   and a clean SIGTERM (ServiceRunner);
// - metrics for `mainloop ctl metrics` (MainLoopMetrics + Prometheus).
//
//   template-service [--socket PATH] [--defaults-file PATH] [--locale-file PATH] [--zone-file PATH]...
import Glibc
import MainLoopKit
import MainLoopMetrics
import Metrics
import Prometheus

/// Writes one line to stdout at once (a supervisor's log sees it even if
/// the process is killed later).
func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
}

/// The command line: the same file flags as `mainloop run`.
struct Options {
    var socket: String?
    var sources = LinuxSources.Settings()

    init(arguments: [String]) throws {
        var rest = arguments.dropFirst()
        var zoneFiles: [String] = []
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError(flag: flag) }
            switch flag {
            case "--socket": socket = value
            case "--defaults-file": sources.defaultsFile = value
            case "--locale-file": sources.localeFile = value
            case "--zone-file": zoneFiles.append(value)
            default: throw UsageError(flag: flag)
            }
        }
        if !zoneFiles.isEmpty { sources.zoneFiles = zoneFiles }
    }
}

/// A flag the template does not know, or one without its value.
struct UsageError: Error, CustomStringConvertible {
    let flag: String
    var description: String {
        "unknown or incomplete option '\(flag)'. Usage: template-service [--socket PATH] [--defaults-file PATH] "
            + "[--locale-file PATH] [--zone-file PATH]..."
    }
}

/// The app's delegate: your code, isolated to the main actor.
@MainActor final class AppDelegate: MainActorApplicationDelegate {
    private(set) var launches = 0

    func applicationDidFinishLaunching(_ application: Application) {
        launches += 1
        emit("app: launched (\(launches))")
    }
    func applicationDidBecomeActive(_ application: Application) { emit("app: active") }
    func applicationDidEnterBackground(_ application: Application) { emit("app: background (save state here)") }
    func applicationWillEnterForeground(_ application: Application) { emit("app: coming back") }
    func applicationWillTerminate(_ application: Application) { emit("app: terminating") }
    func applicationDidReceiveMemoryWarning(_ application: Application) { emit("app: memory warning") }
    func application(_ application: Application, didReceiveInput input: String) { emit("app: input \(input)") }
}

/// Prints every notification the app receives: live ones one by one,
/// held ones merged on resume (one per kind, before any input).
@MainActor final class NotificationPrinter {
    private(set) var received = 0

    func observe(_ center: SystemNotificationCenter) throws {
        try center.addObserver { notification in
            self.received += 1
            emit("notification: \(notification)")
        }
    }
}

@main
struct TemplateService {
    static func main() {
        do {
            try run(options: try Options(arguments: CommandLine.arguments))
        } catch {
            emit("template-service: \(error)")
            exit(1)
        }
    }

    @MainActor
    static func run(options: Options) throws {
        // Logs go to stderr through a bounded queue: a stderr nobody reads
        // never blocks the loop.
        LoggingSystem.bootstrap { BoundedLogHandler(label: $0, pump: BoundedLogHandler.standardError) }
        let logger = Logger(label: "template-service")
        signal(SIGPIPE, SIG_IGN)
        // Before anything else: the sockets systemd passed (the variables
        // are removed, so children do not take them for theirs).
        let passed = try SocketActivation.takePassedSockets()
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        // The app, on the main thread's loop.
        let application = try Application(mainActorDelegate: AppDelegate())
        let loop = application.loop
        // Log lines from the loop wake stderr's writer once a turn, and the
        // first one starts it in the loop's first turn, after READY=1.
        BoundedLogHandler.standardError.wakingLoop = loop
        let printer = NotificationPrinter()
        try printer.observe(application.notifications)
        // Monitoring sees every state as it happens (app code is gated).
        application.addEngineObserver { event in
            if case .stateChanged(let state) = event { emit("state: \(state.rawValue)") }
        }

        // The parts. The runner first: its signal handlers are in place
        // before a client can reach the socket.
        let runner = try ServiceRunner(application: application, logger: logger)
        let sources = try LinuxSources(center: application.notifications, logger: logger, settings: options.sources)
        runner.onReload = { sources.reload() }
        // UPower, iio-sensor-proxy and logind, when a system bus is reachable.
        let systemBus = SystemBusSources(center: application.notifications, logger: logger)
        systemBus.onWake = { sources.reload() }
        let responder = ControlResponder(application: application)
        let loopMetrics = LoopMetrics(loop: loop, hangThreshold: .seconds(1)) { hang in logger.warning("loop hang: \(hang)") }
        let serviceMetrics = ServiceMetrics(application: application)
        responder.metricsText = {
            serviceMetrics.sample()
            return registry.emitToString()
        }
        let server = try responder.serve(path: options.socket, passed: passed, logger: logger)
        serviceMetrics.server = server
        runner.status = { "app \(application.state.rawValue); control socket \(server.path)" }
        runner.onStop = { server.stop() }

        // Your own async work: a @MainActor task on the loop's clock. It
        // waits while the app is suspended, like all main-actor work.
        let heartbeat = Task { @MainActor in
            while !Task.isCancelled {
                try await loop.clock.sleep(for: .seconds(60))
                emit("heartbeat: \(printer.received) notifications so far")
            }
        }

        sources.setInitialValues()
        try application.perform(.launch)
        emit("serving on \(server.path)")
        try runner.run()  // READY=1, the loop until SIGTERM, a clean exit
        heartbeat.cancel()
        loopMetrics.stop()
        withExtendedLifetime(systemBus) {}
        emit("stopped cleanly")
        _ = BoundedLogHandler.standardError.finish(within: .seconds(1))
    }
}
