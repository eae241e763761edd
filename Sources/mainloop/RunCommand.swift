import Glibc
import MainLoopKit
import ScenarioReplay

/// `mainloop run`: the host service on the real loop.
struct RunCommand {
    static let spec = CommandSpec(
        name: "run",
        abstract: "Run the host service: real time/locale/defaults sources and a control socket.",
        discussion: """
            Launches the app at start (in the background with --background), prints every \
            observation as one JSON line on stdout (BEHAVIOUR.md §7 shape; "at" is Unix time), logs to \
            stderr, and exits cleanly on SIGTERM or SIGINT (willTerminate if the app is running).
            """,
        options: [
            .value("socket", "path", "Control socket path (default: $XDG_RUNTIME_DIR/mainloop.sock, else mainloop.sock in the private directory ${TMPDIR:-/tmp}/mainloop-UID)."),
            .value("domain", "domain", "User defaults domain (file under $XDG_CONFIG_HOME/mainloop/).", default: "mainloop"),
            .value("defaults-file", "path", "User defaults file (overrides --domain)."),
            .value("locale-file", "path", "Locale file to watch.", default: "/etc/default/locale"),
            .value("zone-file", "path", "Time zone file to watch; the first one gives the zone (default: /etc/localtime and /etc/timezone).",
                   repeatable: true),
            .flag("background", "Launch in the background (launchInBackground)."),
            .flag("no-system-bus", "Do not follow UPower, iio-sensor-proxy and logind on the system bus (on by default when a bus is reachable)."),
            .flag("no-devices", "Do not follow the kernel's device events (USB accessories, DRM screens)."),
            .value("output-buffer-bytes", "bytes", "Observations waiting for stdout at most, in bytes; beyond it they are dropped and counted.",
                   default: "\(8 << 20)"),
            .value("max-subjects", "count", "Subjects (accessories, screens, defaults keys, ...) one keyed kind keeps at most.",
                   default: "\(CoalescingLimits().maxSubjectsPerKind)"),
            .value("max-subject-bytes", "bytes", "The longest subject id, in UTF-8 bytes.",
                   default: "\(CoalescingLimits().maxSubjectBytes)"),
            .value("max-value-bytes", "bytes", "The largest event value, in bytes of JSON.",
                   default: "\(CoalescingLimits().maxValueBytes)"),
            .value("max-reply-bytes", "bytes", "The largest query reply, in bytes of JSON.", default: "\(1 << 20)"),
            .value("hang-threshold", "seconds", "Log a loop callback that runs at least this long, in seconds, while it runs and when it returns (0: off).",
                   default: "1"),
            .value("memory-pressure-purge-after", "seconds", "Memory pressure lasting this long, in seconds, while the app is suspended purges it.",
                   default: "10"),
            .value("metrics-file", "path", "Write the metrics as Prometheus text to this file (atomically, node_exporter textfile-collector style)."),
            .value("metrics-interval", "seconds", "How often the metrics file is rewritten, in seconds.", default: "5"),
            .value("config", "file", "The app's configuration: a JSON object with a scenario's config keys (time limits, "
                   + "background modes, expirationHandlerEndsTask, customKinds; docs/BEHAVIOUR.md §7)."),
            .value("record", "file", "Record the session into FILE (a recording `mainloop replay` replays): every input, "
                   + "each at its instant. Observations then carry `at` as seconds since the start on the loop's clock, "
                   + "and no `time`, so the replay prints them exactly."),
            .value("record-limit", "bytes", "The largest recording, in bytes (4096 to 256 MiB, the largest "
                   + "file replay reads); at it the recording says so and stops.",
                   default: "\(64 << 20)"),
        ]
    )

    let socket: String?
    let domain: String
    let defaultsFile: String?
    let localeFile: String
    let zoneFiles: [String]
    let background: Bool
    let noSystemBus: Bool
    let noDevices: Bool
    let outputBufferBytes: Int
    let maxSubjects: Int
    let maxSubjectBytes: Int
    let maxValueBytes: Int
    let maxReplyBytes: Int
    let hangThreshold: Double
    let memoryPressurePurgeAfter: Double
    let metricsFile: String?
    let metricsInterval: Double
    let configFile: String?
    let recordFile: String?
    let recordLimit: Int

    /// Reads and checks the options (ranges included): a mistake is a usage error.
    init(_ arguments: ParsedArguments) throws(UsageError) {
        socket = arguments.string("socket")
        domain = arguments.string("domain")!
        defaultsFile = arguments.string("defaults-file")
        localeFile = arguments.string("locale-file")!
        // Two by default, which a spec default (one value) cannot say.
        let zoneFiles = arguments.all("zone-file")
        self.zoneFiles = zoneFiles.isEmpty ? ["/etc/localtime", "/etc/timezone"] : zoneFiles
        background = arguments.flag("background")
        noSystemBus = arguments.flag("no-system-bus")
        noDevices = arguments.flag("no-devices")
        outputBufferBytes = try arguments.int("output-buffer-bytes")
        maxSubjects = try arguments.int("max-subjects")
        maxSubjectBytes = try arguments.int("max-subject-bytes")
        maxValueBytes = try arguments.int("max-value-bytes")
        maxReplyBytes = try arguments.int("max-reply-bytes")
        hangThreshold = try arguments.double("hang-threshold")
        memoryPressurePurgeAfter = try arguments.double("memory-pressure-purge-after")
        metricsFile = arguments.string("metrics-file")
        metricsInterval = try arguments.double("metrics-interval")
        configFile = arguments.string("config")
        recordFile = arguments.string("record")
        recordLimit = try arguments.int("record-limit")
        // At most what `mainloop replay` reads: a longer recording could not be replayed.
        guard recordLimit >= 4096 && recordLimit <= ScenarioFile.maxFileBytes else {
            throw UsageError("--record-limit must be between 4096 and \(ScenarioFile.maxFileBytes) bytes (the largest "
                             + "recording mainloop replay reads), not \(recordLimit)")
        }
        guard metricsInterval >= 0.1 && metricsInterval <= 86_400 else {
            throw UsageError("--metrics-interval must be between 0.1 and 86400 seconds, not \(metricsInterval)")
        }
        for (name, value) in [("--hang-threshold", hangThreshold), ("--memory-pressure-purge-after", memoryPressurePurgeAfter)]
        where !(value >= 0 && value <= 86_400) {
            throw UsageError("\(name) must be between 0 and 86400 seconds, not \(value)")
        }
        for (name, value) in [("--output-buffer-bytes", outputBufferBytes), ("--max-subjects", maxSubjects),
                              ("--max-subject-bytes", maxSubjectBytes), ("--max-value-bytes", maxValueBytes),
                              ("--max-reply-bytes", maxReplyBytes)] where value <= 0 {
            throw UsageError("\(name) must be positive, not \(value)")
        }
    }

    func run() throws {
        Logging.bootstrapOnce()
        let logger = Logger(label: "mainloop.run")
        signal(SIGPIPE, SIG_IGN)
        // Read before anything else: the variables are removed from the
        // environment so that children do not take them for theirs.
        let inherited = try SocketActivation.controlSocket(in: SocketActivation.takePassedSockets())
        let socketPath: String
        if let inherited, socket == nil {
            socketPath = SocketActivation.boundPath(of: inherited)
        } else {
            socketPath = try socket ?? DefaultSocketPath.resolve(creating: true)
        }
        var options = ServiceOptions(socketPath: socketPath)
        options.inheritedSocket = inherited
        options.domain = domain
        options.defaultsFile = defaultsFile
        options.localeFile = localeFile
        options.zoneFiles = zoneFiles
        options.background = background
        options.systemBus = !noSystemBus
        options.devices = !noDevices
        options.limits.maxSubjectsPerKind = maxSubjects
        options.limits.maxSubjectBytes = maxSubjectBytes
        options.limits.maxValueBytes = maxValueBytes
        options.maxReplyBytes = maxReplyBytes
        // A recorded session reads the clock once per callback, so its
        // replay on the manual clock gives the same instants.
        let loop = try recordFile == nil ? MainRunLoop() : MainRunLoop(clockReading: .perCallback)
        // Log lines written on the loop's thread wake stderr's writer once a
        // turn, and the first one starts it in the loop's first turn (after
        // READY=1), as stdout's below.
        BoundedLogHandler.standardError.wakingLoop = loop
        // Observations go through a bounded queue and a writer thread: the
        // loop never waits for whoever reads stdout (or does not).
        let output = BoundedOutputPump(descriptor: STDOUT_FILENO, limitBytes: outputBufferBytes, wakingFrom: loop)
        let overflowLog = RateLimitedLog(logger: logger, loop: loop)
        // The scenario's config keys, so a session runs as a scenario states it.
        var stated = Scenario(name: "service")
        if let configFile { stated = try ScenarioFile.readConfig(configFile) }
        // Each observation is written straight to JSON bytes (no object
        // per line, no String between) and copied into the pump's queue.
        let service = try ServiceHost(options: options, loop: loop, logger: logger, configuration: stated.configuration,
                                      sessionClock: recordFile != nil) { (line: [UInt8]) in
            guard !output.write(lineBytes: line) else { return }
            overflowLog.log(.warning, "stdout is not being read fast enough: \(output.droppedLines) observations dropped so far")
        }
        for rule in stated.customKinds { try service.center.register(rule) }
        service.interpreter.expirationHandlerEndsTask = stated.expirationHandlerEndsTask
        service.extraStats = {
            let stats: JSONObject = ["outputDroppedLines": .number(Double(output.droppedLines)),
                                     "outputPendingBytes": .number(Double(output.pendingBytes)),
                                     "logDroppedLines": .number(Double(BoundedLogHandler.standardError.droppedLines))]
            return stats
        }
        let metrics = MetricsExport(host: service, hangThreshold: hangThreshold > 0 ? .seconds(fractional: hangThreshold) : nil,
                                    file: metricsFile, interval: .seconds(fractional: metricsInterval), logger: logger)
        // Every signal is handled before the socket exists (it appears in
        // service.start()): a supervisor that sees the socket may signal at once.
        let runner = try ServiceRunner(application: service.application, logger: logger,
                                       configuration: .init(memoryPressurePurgeAfter: .seconds(fractional: memoryPressurePurgeAfter)))
        runner.onReload = { service.reloadSources() }
        runner.status = { service.statusLine }
        runner.onStop = { service.shutdown() }
        var recorder: SessionRecorder?
        if let recordFile {
            service.beforeLaunch = { [recordLimit] in
                recorder = try SessionRecorder(application: service.application, interpreter: service.interpreter,
                                               path: recordFile, origin: service.sessionOrigin,
                                               expirationHandlerEndsTask: stated.expirationHandlerEndsTask,
                                               maxBytes: recordLimit) { problem in
                    logger.error("recording \(recordFile): \(problem)")
                }
            }
        }
        try service.start()
        try runner.run()
        recorder?.stop()
        if let metricsFile { metrics.write(to: metricsFile) }
        metrics.stop()
        let unwritten = output.finish(within: .seconds(1))
        if unwritten > 0 || output.droppedLines > 0 {
            logger.warning("stdout: \(output.droppedLines) observations dropped, \(unwritten) bytes left unwritten at exit")
        }
        Logging.flush()
    }
}

enum Logging {
    private static let once: Void = LoggingSystem.bootstrap {
        BoundedLogHandler(label: $0, pump: BoundedLogHandler.standardError)
    }
    /// Logs go to stderr through a bounded queue and a writer thread (a
    /// stderr nobody reads never blocks the loop); stdout carries only
    /// observations and replies.
    static func bootstrapOnce() {
        _ = once
        // Lines queued by a path that exits early (a start-up error) still
        // reach stderr.
        atexit { Logging.flush() }
    }

    /// Waits up to a second for the queued log lines to reach stderr (exit).
    static func flush() { _ = BoundedLogHandler.standardError.finish(within: .seconds(1)) }
}
