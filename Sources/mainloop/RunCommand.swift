import ArgumentParser
import Glibc
import LinuxSystemEvents
import Logging
import MainLoop
import MainLoopJSON
import SystemNotifications

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

    func validate() throws {
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
        var options = ServiceOptions(socketPath: try socket ?? DefaultSocketPath.resolve(creating: true))
        options.domain = domain
        options.defaultsFile = defaultsFile
        options.localeFile = localeFile
        options.zoneFiles = zoneFiles
        options.background = background
        options.limits.maxSubjectsPerKind = maxSubjects
        options.limits.maxSubjectBytes = maxSubjectBytes
        options.limits.maxValueBytes = maxValueBytes
        options.maxReplyBytes = maxReplyBytes
        let loop = try MainRunLoop()
        // The signals are handled before the socket exists: a supervisor
        // that sees the socket may send SIGTERM at once.
        var host: ServiceHost?
        let stop = {
            host?.shutdown()
            loop.stop()
        }
        let terminate = try loop.addSignal(SIGTERM, handler: stop)
        let interrupt = try loop.addSignal(SIGINT, handler: stop)
        // Observations go through a bounded queue and a writer thread: the
        // loop never waits for whoever reads stdout (or does not).
        let output = BoundedOutputPump(descriptor: STDOUT_FILENO, limitBytes: outputBufferBytes)
        var overflowLog = LogRateLimit()
        let service = try ServiceHost(options: options, loop: loop, logger: logger) { observation in
            guard !output.write(line: JSONValue.object(observation).jsonText) else { return }
            let (log, leftOut) = overflowLog.admit(at: loop.now)
            if log {
                let note = LogRateLimit.leftOutNote(leftOut)
                logger.warning("stdout is not being read fast enough: \(output.droppedLines) observations dropped so far\(note)")
            }
        }
        service.extraStats = {
            let stats: JSONObject = ["outputDroppedLines": .number(Double(output.droppedLines)),
                                     "outputPendingBytes": .number(Double(output.pendingBytes))]
            return stats
        }
        host = service
        try service.start()
        try loop.run()
        try Self.ignoreWhileExiting([SIGTERM, SIGINT], handedBackBy: [terminate, interrupt])
        let unwritten = output.finish(within: .seconds(1))
        if unwritten > 0 || output.droppedLines > 0 {
            logger.warning("stdout: \(output.droppedLines) observations dropped, \(unwritten) bytes left unwritten at exit")
        }
    }

    /// From here on the process is exiting: a repeated SIGTERM or SIGINT
    /// must not end it with 143 or 130. Removing a libevent signal source
    /// restores the default action, so the signals are blocked on this
    /// thread (the only one that takes them: libdispatch's threads block
    /// them), handed back, set to be ignored (which discards one pending
    /// meanwhile), and unblocked.
    static func ignoreWhileExiting(_ signals: [Int32], handedBackBy sources: [SignalSource]) throws {
        var exiting = sigset_t()
        sigemptyset(&exiting)
        for number in signals { sigaddset(&exiting, number) }
        pthread_sigmask(SIG_BLOCK, &exiting, nil)
        for source in sources { try source.remove() }
        for number in signals { signal(number, SIG_IGN) }
        pthread_sigmask(SIG_UNBLOCK, &exiting, nil)
    }
}

enum Logging {
    private static let once: Void = LoggingSystem.bootstrap(StreamLogHandler.standardError)
    /// Logs go to stderr; stdout carries only observations and replies.
    static func bootstrapOnce() { _ = once }
}
