import MainLoopKit
import Dispatch
import Glibc

/// `mainloop demo`: the main job for a new user. A real service on the real
/// libevent loop, driven from outside for a few seconds: it is suspended,
/// system events of many kinds arrive (over the control socket, through real
/// file changes and through the user-defaults store as another process would
/// write them), and on resume each kind arrives once, merged.
struct DemoCommand {
    static let spec = CommandSpec(
        name: "demo",
        abstract: "Run a real service, suspend it, send it events, resume it, and show the merged result.",
        options: [.value("pace", "milliseconds", "Pause between steps, in milliseconds (0 or more).", default: "120")]
    )

    let pace: Int

    init(_ arguments: ParsedArguments) throws(UsageError) {
        pace = try arguments.int("pace")
        guard pace >= 0 else { throw UsageError("--pace must be 0 or more, not \(pace)") }
    }

    func run() throws {
        Logging.bootstrapOnce()
        signal(SIGPIPE, SIG_IGN)
        let demo = try DemoRun(pace: pace)
        defer { demo.finish() }
        try demo.play()
    }
}

/// One demo run: a temporary directory, the service on its own loop
/// thread, and the driver on this thread.
private final class DemoRun {
    let timeline = DemoTimeline()
    let directory: String
    let socket: String
    let defaultsFile: String
    let localeFile: String
    let zoneFile: String
    let pace: Int
    let loopThread: LoopThread
    /// The service, on its loop thread (reached only there, through `onLoop`).
    let host: LoopBoundBox<ServiceHost?>
    /// Another process's view of the defaults (a separate store object).
    let otherProcessDefaults: UserDefaultsStore

    init(pace: Int) throws {
        self.pace = pace
        var template = Array("/tmp/mainloop-demo-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ToolError("cannot create a temporary directory") }
        directory = String(cString: made)
        socket = directory + "/control.sock"
        defaultsFile = directory + "/com.example.demo.json"
        localeFile = directory + "/locale"
        zoneFile = directory + "/localtime"
        otherProcessDefaults = UserDefaultsStore(path: defaultsFile)
        try otherProcessDefaults.set(12, forKey: "fontSize")
        try otherProcessDefaults.set("light", forKey: "theme")
        try AtomicFile.write("LANG=en_US.UTF-8\n", to: localeFile)
        try Self.copy("/usr/share/zoneinfo/Europe/Paris", to: zoneFile)

        loopThread = try LoopThread.start()
        host = LoopBoundBox<ServiceHost?>.makeEmpty(loop: loopThread.loop)
        var options = ServiceOptions(socketPath: socket)
        options.defaultsFile = defaultsFile
        options.localeFile = localeFile
        options.zoneFiles = [zoneFile]
        options.detectClockSet = true
        let timeline = self.timeline
        let started = DispatchSemaphore(value: 0)
        let failure = LockedValue<String?>(nil)
        let loop = loopThread.loop
        let serviceOptions = options
        let host = self.host
        try loop.execute {
            do {
                var logger = Logger(label: "mainloop.demo")
                logger.logLevel = .warning
                let made = try ServiceHost(options: serviceOptions, loop: loop, logger: logger) {
                    timeline.observation($0)
                }
                host.value = made
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            started.signal()
        }
        started.wait()
        if let message = failure.withLock({ $0 }) { throw ToolError("the demo service failed to start: \(message)") }
    }

    func play() throws {
        timeline.heading("MainLoop demo: a real service on libevent, suspended and resumed")
        timeline.note("control socket  \(socket)")
        timeline.note("user defaults   \(defaultsFile)")
        timeline.note("locale file     \(localeFile)   zone file \(zoneFile)")

        timeline.heading("1. Launch and go to the background (nothing keeps the app running, so it is suspended)")
        try onLoop { [host] in try host.value!.start() }
        try ctl(["lifecycle": "home"], "ctl home")

        timeline.heading("2. While suspended, the system keeps changing. Nothing reaches the app; it is held.")
        for orientation in ["landscapeLeft", "faceUp", "landscapeRight"] {
            try ctl(["system": ["orientation": .string(orientation)]], "ctl orientation \(orientation)")
        }
        for (key, value) in [("fontSize", JSONValue(14)), ("fontSize", 16), ("theme", "dark"), ("theme", "light")] {
            timeline.action("another process writes defaults: \(key) = \(value.jsonText)")
            try otherProcessDefaults.set(value, forKey: key)
            pause()
        }
        for locale in ["fr_FR", "de_DE"] {
            timeline.action("the locale file changes: LANG=\(locale).UTF-8")
            try AtomicFile.write("LANG=\(locale).UTF-8\n", to: localeFile)
            pause()
        }
        timeline.action("the time zone file is replaced: Europe/Paris → Asia/Tokyo")
        try Self.copy("/usr/share/zoneinfo/Asia/Tokyo", to: zoneFile)
        pause()
        try ctl(["system": ["significantTimeChange": "clockSet"]],
                "ctl significantTimeChange clockSet   (injected: really setting the clock needs root)")
        try ctl(["system": ["batteryState": "charging"]], "ctl batteryState charging")
        try ctl(["system": ["batteryState": "unplugged"]], "ctl batteryState unplugged   (back to where it was)")
        try ctl(["system": ["lowPowerMode": true]], "ctl lowPowerMode true")
        try ctl(["system": ["thermalState": "fair"]], "ctl thermalState fair")
        try ctl(["system": ["thermalState": "serious"]], "ctl thermalState serious")
        try ctl(["input": "tap-1"], "ctl input tap-1")
        let state = try ctl(["query": "state"], "ctl state")
        timeline.note("state \(state["state"]?.stringValue ?? "?"), holding \(state["holding"]?.jsonText ?? "?"), "
                      + "\(state["heldSlots"]?.jsonText ?? "?") held slots (one per kind/subject, however many events)")

        timeline.heading("3. Resume: one merged notification per kind, net change only, before any input")
        try ctl(["lifecycle": "foreground"], "ctl foreground")
        try ctl(["input": "tap-2"], "ctl input tap-2")

        timeline.heading("4. Accounting: nothing is lost silently")
        let stats = try ctl(["query": "stats"], "ctl stats")
        var held = 0, folded = 0, cancelled = 0, delivered = 0
        for (_, counters) in stats["kinds"]?.objectValue ?? JSONObject() {
            held += Int(counters.objectValue?["held"]?.numberValue ?? 0)
            folded += Int(counters.objectValue?["folded"]?.numberValue ?? 0)
            cancelled += Int(counters.objectValue?["cancelled"]?.numberValue ?? 0)
            delivered += Int(counters.objectValue?["deliveredMerged"]?.numberValue ?? 0)
        }
        timeline.note("\(held) events held while suspended → \(delivered) notifications on resume "
                      + "(\(folded) events folded, \(cancelled) cancelled as net zero)")

        timeline.heading("5. Shut down")
        try onLoop { [host] in
            host.value!.shutdown()
            host.value = nil  // released on its own loop thread
        }
        timeline.note("done")
    }

    func finish() {
        // On an early failure the host is still alive: release it on its loop.
        do {
            try onLoop { [host] in host.value = nil }
            try loopThread.stopAndJoin()
        } catch {
            Output.error("demo: cleaning up failed: \(error)")
        }
        for name in ["control.sock", "com.example.demo.json", "com.example.demo.json.lock", "locale", "localtime"] {
            unlink(directory + "/" + name)
        }
        rmdir(directory)
    }

    @discardableResult
    private func ctl(_ request: JSONValue, _ label: String) throws -> JSONObject {
        timeline.action(label)
        let reply = try ControlClient.send(request, to: socket)
        if reply["ok"] != .bool(true) { timeline.note("reply: \(JSONValue.object(reply).jsonText)") }
        pause()
        return reply
    }

    private func pause() { usleep(useconds_t(pace * 1000)) }

    /// Runs `body` on the service's loop thread and waits for it.
    private func onLoop(_ body: @escaping @Sendable () throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = LockedValue<String?>(nil)
        try loopThread.loop.execute {
            do { try body() } catch { failure.withLock { $0 = "\(error)" } }
            done.signal()
        }
        done.wait()
        if let message = failure.withLock({ $0 }) { throw ToolError(message) }
    }

    static func copy(_ source: String, to destination: String) throws {
        let bytes: [UInt8]
        do { bytes = try FileContents.bytes(source) } catch {
            throw ToolError("\(error) (is tzdata installed?)")
        }
        try AtomicFile.write(bytes, to: destination, mode: 0o644)
    }
}
