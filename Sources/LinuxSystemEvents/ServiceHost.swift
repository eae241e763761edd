import AppLifecycle
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
    public private(set) var control: ControlServer!
    private let options: ServiceOptions
    private let logger: Logger
    private let observer: ObservingAppDelegate
    private let watcher: FileWatcher
    private var timeSource: SignificantTimeChangeSource!
    private var localeSource: LocaleSource!
    private var defaultsMonitor: UserDefaultsMonitor!
    private let wallClock: SystemWallClock

    /// Builds the service (sources and socket), not yet launched.
    public init(options: ServiceOptions, loop: MainRunLoop, logger: Logger,
                configuration: LifecycleConfiguration = LifecycleConfiguration(),
                output: @escaping (JSONObject) -> Void) throws {
        self.options = options
        self.loop = loop
        self.logger = logger
        wallClock = SystemWallClock(localtimePath: options.zoneFiles.first ?? "/etc/localtime")
        application = Application(loop: loop, configuration: configuration)
        center = try SystemNotificationCenter(application: application)
        observer = ObservingAppDelegate(timestamp: { ServiceHost.wallClockFields() }, sink: output)
        try observer.attach(to: application, center: center)
        watcher = try FileWatcher(loop: loop)
        if let file = options.defaultsFile {
            defaults = UserDefaultsStore(path: file)
        } else {
            defaults = try UserDefaultsStore(domain: options.domain)
        }
        let center = self.center
        let post: (SystemEvent) -> Void = { event in
            do { try center.post(event) } catch { logger.error("cannot post \(event.kind): \(error)") }
        }
        timeSource = try SignificantTimeChangeSource(loop: loop, clock: wallClock, watcher: watcher,
                                                     zoneFiles: options.zoneFiles, detectClockSet: options.detectClockSet,
                                                     post: post)
        localeSource = try LocaleSource(path: options.localeFile, watcher: watcher, post: post)
        defaultsMonitor = try UserDefaultsMonitor(store: defaults, watcher: watcher, post: post) { error in
            logger.error("\(error)")
        }
        control = try ControlServer(loop: loop, path: options.socketPath, mode: options.socketMode, logger: logger) {
            [unowned self] request in self.handle(request)
        }
    }

    /// Sets the system's current values from the sources and launches the
    /// app (`launchInBackground` with `background`).
    public func start() throws {
        try center.setInitialValue(.locale(localeSource.identifier))
        for event in defaultsMonitor.initialEvents { try center.setInitialValue(event) }
        logger.info("service started", metadata: ["socket": "\(options.socketPath)", "defaults": "\(defaults.path)",
                                                  "locale": "\(localeSource.identifier)"])
        try application.perform(options.background ? .launchInBackground : .launch)
    }

    /// Terminates the app if it is running code (willTerminate) or
    /// suspended, and closes the control socket.
    public func shutdown() {
        if application.state != .notRunning { try? application.perform(.terminate) }
        control.stop()
        logger.info("service stopped")
    }

    /// Answers one control request (SPEC §6 vocabulary without `at`, plus
    /// queries). Never throws: every problem becomes an error reply.
    public func handle(_ request: JSONValue) -> JSONObject {
        guard let object = request.objectValue, object.count == 1, let (kind, body) = object.first(where: { _ in true }) else {
            return ControlServer.error("a request is an object with exactly one of lifecycle, system, input, query")
        }
        switch kind {
        case "lifecycle":
            guard let name = body.stringValue, let command = LifecycleCommand(rawValue: name) else {
                let known = LifecycleCommand.allCases.map(\.rawValue).joined(separator: ", ")
                return ControlServer.error("unknown lifecycle command \(body.jsonText) (known: \(known))")
            }
            do {
                try application.perform(command)
                return ["ok": true, "state": .string(application.state.rawValue)]
            } catch {
                return ControlServer.error(error.description)
            }
        case "system":
            do {
                try center.post(try center.decodeEvent(body))
                return ["ok": true]
            } catch {
                return ControlServer.error("\(error)")
            }
        case "input":
            guard let id = body.stringValue else { return ControlServer.error("'input' must be a string") }
            do {
                try application.deliverInput(id)
                return ["ok": true]
            } catch {
                return ControlServer.error("\(error)")
            }
        case "query":
            return query(body.stringValue ?? "")
        default:
            return ControlServer.error("unknown request '\(kind)': expected lifecycle, system, input or query")
        }
    }

    private func query(_ what: String) -> JSONObject {
        switch what {
        case "state":
            return ["ok": true, "state": .string(application.state.rawValue), "holding": .bool(center.isHolding),
                    "heldSlots": .number(Double(center.heldSlotCount)),
                    "remainingBackgroundTime": application.remainingBackgroundTime.map { .number($0.secondsDouble) } ?? .null,
                    "openBackgroundTasks": .array(application.openBackgroundTaskNames.map(JSONValue.string))]
        case "stats":
            var kinds = JSONObject()
            for (kind, counters) in center.statistics {
                kinds[kind.name] = ["received": .number(Double(counters.received)),
                                    "ignoredUnchanged": .number(Double(counters.ignoredUnchanged)),
                                    "deliveredLive": .number(Double(counters.deliveredLive)),
                                    "held": .number(Double(counters.held)),
                                    "deliveredMerged": .number(Double(counters.deliveredMerged)),
                                    "folded": .number(Double(counters.folded)),
                                    "cancelled": .number(Double(counters.cancelled)),
                                    "discarded": .number(Double(counters.discarded)),
                                    "pending": .number(Double(counters.pending))]
            }
            return ["ok": true, "kinds": .object(kinds), "discardedInput": .number(Double(application.discardedInputCount)),
                    "refusedPeers": .number(Double(control.refusedPeers)),
                    "malformedRequests": .number(Double(control.malformedRequests))]
        case "values":
            var values = JSONObject()
            for kind in center.kinds { values[kind.name] = (try? center.currentValue(of: kind)) ?? .null }
            return ["ok": true, "values": .object(values)]
        default:
            return ControlServer.error("unknown query \"\(what)\": expected state, stats or values")
        }
    }

    /// `at` (Unix seconds) and `time` (ISO 8601, UTC, milliseconds).
    static func wallClockFields() -> JSONObject {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let millis = Int32(spec.tv_nsec / 1_000_000)
        let iso = "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
        let at = (Double(spec.tv_sec) + Double(spec.tv_nsec / 1_000_000) / 1000)
        return ["at": .number(at), "time": .string(iso)]
    }
}
