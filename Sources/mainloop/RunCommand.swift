import ArgumentParser
import Glibc
import MainLoopKit

/// `mainloop run`: the host service on the real loop.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the host service: real time/locale/defaults sources and a control socket.",
        discussion: """
            Launches the app at start (in the background with --background), prints every \
            observation as one JSON line on stdout (SPEC §7 shape; "at" is Unix time), logs to \
            stderr, and exits cleanly on SIGTERM or SIGINT (willTerminate if the app is running).
            """
    )

    @Option(help: "Control socket path (default: $XDG_RUNTIME_DIR/mainloop.sock, else mainloop.sock in the private directory ${TMPDIR:-/tmp}/mainloop-UID).")
    var socket: String?
    @Option(help: "User defaults domain (file under $XDG_CONFIG_HOME/mainloop/).")
    var domain: String = "mainloop"
    @Option(name: .customLong("defaults-file"), help: "User defaults file (overrides --domain).")
    var defaultsFile: String?
    @Option(name: .customLong("locale-file"), help: "Locale file to watch.")
    var localeFile: String = "/etc/default/locale"
    @Option(name: .customLong("zone-file"), help: "Time zone file to watch (repeatable).")
    var zoneFiles: [String] = ["/etc/localtime", "/etc/timezone"]
    @Flag(help: "Launch in the background (launchInBackground).")
    var background = false

    @Flag(name: .customLong("no-system-bus"),
          help: "Do not follow UPower, iio-sensor-proxy and logind on the system bus (on by default when a bus is reachable).")
    var noSystemBus = false

    @Flag(name: .customLong("no-devices"),
          help: "Do not follow the kernel's device events (USB accessories, DRM screens).")
    var noDevices = false

    @Option(help: "Observations waiting for stdout at most, in bytes; beyond it they are dropped and counted.")
    var outputBufferBytes: Int = 8 << 20

    @Option(help: "Subjects (accessories, screens, defaults keys, ...) one keyed kind keeps at most.")
    var maxSubjects: Int = CoalescingLimits().maxSubjectsPerKind

    @Option(help: "The longest subject id, in UTF-8 bytes.")
    var maxSubjectBytes: Int = CoalescingLimits().maxSubjectBytes

    @Option(help: "The largest event value, in bytes of JSON.")
    var maxValueBytes: Int = CoalescingLimits().maxValueBytes

    @Option(help: "The largest query reply, in bytes of JSON.")
    var maxReplyBytes: Int = 1 << 20

    @Option(help: "Log a loop callback that runs at least this long, in seconds, while it runs and when it returns (0: off).")
    var hangThreshold: Double = 1

    @Option(help: "Memory pressure lasting this long, in seconds, while the app is suspended purges it.")
    var memoryPressurePurgeAfter: Double = 10

    @Option(help: "Write the metrics as Prometheus text to this file (atomically, node_exporter textfile-collector style).")
    var metricsFile: String?

    @Option(help: "How often the metrics file is rewritten, in seconds.")
    var metricsInterval: Double = 5

    func validate() throws {
        guard metricsInterval >= 0.1 && metricsInterval <= 86_400 else {
            throw ValidationError("--metrics-interval must be between 0.1 and 86400 seconds, not \(metricsInterval)")
        }
        for (name, value) in [("--hang-threshold", hangThreshold), ("--memory-pressure-purge-after", memoryPressurePurgeAfter)]
        where !(value >= 0 && value <= 86_400) {
            throw ValidationError("\(name) must be between 0 and 86400 seconds, not \(value)")
        }
        for (name, value) in [("--output-buffer-bytes", outputBufferBytes), ("--max-subjects", maxSubjects),
                              ("--max-subject-bytes", maxSubjectBytes), ("--max-value-bytes", maxValueBytes),
                              ("--max-reply-bytes", maxReplyBytes)] where value <= 0 {
            throw ValidationError("\(name) must be positive, not \(value)")
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
        let loop = try MainRunLoop()
        // Observations go through a bounded queue and a writer thread: the
        // loop never waits for whoever reads stdout (or does not).
        let output = BoundedOutputPump(descriptor: STDOUT_FILENO, limitBytes: outputBufferBytes, wakingFrom: loop)
        let overflowLog = RateLimitedLog(logger: logger, loop: loop)
        let service = try ServiceHost(options: options, loop: loop, logger: logger) { observation in
            guard !output.write(line: JSONValue.object(observation).jsonText) else { return }
            overflowLog.log(.warning, "stdout is not being read fast enough: \(output.droppedLines) observations dropped so far")
        }
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
        try service.start()
        try runner.run()
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
