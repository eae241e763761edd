import AppLifecycle
import Foundation
import Glibc
import MainLoopKit
import Logging
import MainLoop
import MainLoopJSON
import Testing
import TestSupport
@testable import mainloop

/// A value shared between the test thread and others, behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func mutate(_ body: (inout Value) -> Void) { lock.lock(); defer { lock.unlock() }; body(&stored) }
}

/// `mainloop run` under a service manager, on real sockets and
/// real signals.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SystemdIntegrationTests {
    /// READY once the socket listens, STATUS lines, WATCHDOG every half
    /// period, RELOADING (with MONOTONIC_USEC) then READY on SIGHUP, and
    /// STOPPING on SIGTERM, to a real datagram listener.
    @Test func notifyProtocolFromALiveService() throws {
        let directory = TemporaryDirectory()
        let listener = try NotifyListener(path: directory.file("notify"))
        let service = try ServiceProcess(directory: directory,
                                         environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "200000"],
                                         waitForSocket: false)
        let untilReady = listener.until("READY=1", timeout: 10)
        let ready = try #require(untilReady.last)
        #expect(untilReady.count == 1, "the launch's state changes ride on READY=1's STATUS=, none before it: \(untilReady)")
        #expect(ready.contains("READY=1"))
        #expect(ready.contains { $0.hasPrefix("STATUS=app active") })
        #expect(ready.contains("MAINPID=\(service.process.processIdentifier)"))
        // READY means the socket answers.
        #expect(try ControlClient.send(["query": "state"], to: service.socket)["ok"] == .bool(true))

        let second = listener.collect(for: 1.0)
        let pings = second.filter { $0 == ["WATCHDOG=1"] }.count
        #expect(pings >= 5 && pings <= 15, "about 10 pings a second expected at WATCHDOG_USEC=200000, got \(pings)")

        kill(service.process.processIdentifier, SIGHUP)
        let reload = listener.until("READY=1", timeout: 5)
        let reloading = try #require(reload.first { $0.contains("RELOADING=1") })
        let monotonic = try #require(reloading.first { $0.hasPrefix("MONOTONIC_USEC=") })
        #expect(UInt64(monotonic.dropFirst("MONOTONIC_USEC=".count)) != nil)
        #expect(reload.last?.contains("READY=1") == true)
        #expect(service.process.isRunning, "SIGHUP reloads; it no longer ends the service")

        kill(service.process.processIdentifier, SIGTERM)
        let stopping = listener.until("STOPPING=1", timeout: 5)
        #expect(stopping.last?.contains("STOPPING=1") == true)
        #expect(service.terminate() == 0)
    }

    /// Regression: SIGHUP ended the service (status 129, as a shell
    /// reports it). Spawned with default signal actions, as systemd or a
    /// shell starts it, it now reloads and keeps answering; a SIGHUP during
    /// the exit changes nothing either.
    @Test func sighupReloadsInsteadOfEndingTheService() throws {
        let directory = TemporaryDirectory()
        let socket = directory.file("s.sock")
        let pid = try spawnWithDefaultSignals(ServiceProcess.runArguments(in: directory))
        #expect(eventually { FileManager.default.fileExists(atPath: socket) })
        #expect(eventually { (try? ControlClient.send(["query": "state"], to: socket))?["ok"] == .bool(true) })
        kill(pid, SIGHUP)
        usleep(300_000)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, WNOHANG) == 0, "SIGHUP no longer ends the service")
        #expect((try? ControlClient.send(["query": "state"], to: socket))?["state"] == .string("active"))
        kill(pid, SIGTERM)
        usleep(1_000)
        kill(pid, SIGHUP)
        #expect(exitStatus(of: pid) == 0)
    }

    /// The watchdog pings come from the loop thread: a callback that blocks
    /// the loop stops them (systemd would restart the service), and the
    /// hang detector names the kind of source while it is still blocked.
    @Test func watchdogPingsStopWhileTheLoopIsBlocked() throws {
        let directory = TemporaryDirectory()
        let listener = try NotifyListener(path: directory.file("notify"))
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let hangs = Locked<[LoopHang]>([])
        let running = Handoff<(ServiceHost, SystemdSupervision)>()
        let notifier = try SystemdNotifier(socketName: listener.path)
        let loop = thread.loop
        var options = ServiceOptions(socketPath: directory.file("s.sock"))
        options.defaultsFile = directory.file("d.json")
        options.localeFile = directory.file("locale")
        options.zoneFiles = [directory.file("localtime")]
        let serviceOptions = options
        try OffLoopReleaseTests.onLoop(thread) {
            let options = serviceOptions
            let logger = Logger(label: "test")
            let host = try ServiceHost(options: options, loop: loop, logger: logger) { _ in }
            loop.startMonitoring(hangThreshold: .milliseconds(300)) { hang in hangs.mutate { $0.append(hang) } }
            let supervision = try SystemdSupervision(application: host.application, notifier: notifier,
                                                     watchdog: WatchdogSettings(period: .milliseconds(100)), logger: logger,
                                                     status: { host.statusLine }, reload: host.reloadSources)
            try host.start()
            supervision.ready()
            running.value = (host, supervision)
        }
        #expect(listener.until("READY=1", timeout: 5).last?.contains("READY=1") == true)
        let live = listener.collect(for: 0.5).filter { $0 == ["WATCHDOG=1"] }.count
        #expect(live >= 5, "pings every 50 ms from a live loop, got \(live) in 0.5 s")

        let blocking = DispatchSemaphore(value: 0)
        try thread.loop.execute {  // a callback that blocks the loop
            blocking.signal()
            usleep(1_200_000)
        }
        try #require(blocking.wait(timeout: .now() + 30) == .success, "the loop ran the blocking callback")
        // Pings sent before the block began are already queued on the
        // socket (an AF_UNIX datagram is delivered by sendto): drop them.
        _ = listener.collect(for: 0.05)
        let blocked = listener.collect(for: 0.9).filter { $0 == ["WATCHDOG=1"] }.count
        #expect(blocked == 0, "no ping while the loop is blocked, got \(blocked)")
        let ongoing = hangs.value
        #expect(ongoing.contains { !$0.finished && $0.kind == .postedWork }, "reported while still blocked: \(ongoing)")

        let after = listener.collect(for: 0.6).filter { $0 == ["WATCHDOG=1"] }.count
        #expect(after >= 3, "pings resume once the loop runs again, got \(after)")
        let finished = hangs.value.filter(\.finished)
        #expect(finished.count == 1 && finished.first?.kind == .postedWork
                && (finished.first?.elapsed ?? .zero) >= .milliseconds(1_200))
        try OffLoopReleaseTests.onLoop(thread) {
            running.value?.1.stopping()
            running.value?.1.remove()
            running.value?.0.shutdown()
            running.value = nil
        }
        #expect(listener.until("STOPPING=1", timeout: 2).last?.contains("STOPPING=1") == true)
    }

    /// `@name` is an abstract socket: no file, the NUL-prefixed address.
    @Test func notifierReachesAnAbstractSocket() throws {
        let name = "@mainloop-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let listener = try NotifyListener(path: name)
        try SystemdNotifier(socketName: name).send(["STATUS=hello"])
        #expect(listener.next(timeout: 1) == ["STATUS=hello"])
        #expect(throws: SocketError.invalidConfiguration(
            "NOTIFY_SOCKET must be an absolute path or an @abstract name, not 'relative/path'")) {
            try SystemdNotifier(socketName: "relative/path")
        }
    }

    /// `$WATCHDOG_USEC` and `$WATCHDOG_PID` as sd_watchdog_enabled reads them.
    @Test func watchdogSettingsParsing() throws {
        #expect(try WatchdogSettings.parse(usec: nil, pid: nil, ownPID: 7) == nil)
        #expect(try WatchdogSettings.parse(usec: "3000000", pid: nil, ownPID: 7)?.pingInterval == .milliseconds(1500))
        #expect(try WatchdogSettings.parse(usec: "3000000", pid: "7", ownPID: 7) != nil)
        #expect(try WatchdogSettings.parse(usec: "3000000", pid: "8", ownPID: 7) == nil, "another process's watchdog")
        for bad in ["0", "-5", "abc", "1.5", "99999999999999999999"] {
            #expect(throws: WatchdogSettingsError.self) { try WatchdogSettings.parse(usec: bad, pid: nil, ownPID: 7) }
        }
        #expect(throws: WatchdogSettingsError.self) { try WatchdogSettings.parse(usec: "5", pid: "x", ownPID: 7) }
    }
}

/// The example units in systemd/ are what `systemd-analyze verify`
/// accepts without a warning (with ExecStart pointed at the built tool).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ExampleUnitTests {
    @Test(.enabled(if: access("/usr/bin/systemd-analyze", X_OK) == 0, "systemd-analyze is not installed"))
    func exampleUnitsVerify() throws {
        let repository = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = TemporaryDirectory()
        for unit in ["mainloop.service", "mainloop.socket"] {
            let text = try String(contentsOf: repository.appendingPathComponent("systemd/\(unit)"), encoding: .utf8)
            writeFile(directory.file(unit), text.replacingOccurrences(of: "/usr/local/bin/mainloop", with: BuiltTool.path))
        }
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = ["verify", "--man=no", directory.file("mainloop.socket"), directory.file("mainloop.service")]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.waitForExit())
        #expect(process.statusIfEnded == 0)
        let ours = text.split(separator: "\n").filter { $0.contains("mainloop.") }
        #expect(ours.isEmpty, "systemd-analyze: \(ours)")
    }
}

/// Socket activation, with the real `systemd-socket-activate`.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SocketActivationTests {
    static var activator: String? {
        ["/usr/bin/systemd-socket-activate", "/bin/systemd-socket-activate"].first { access($0, X_OK) == 0 }
    }

    @Test func servesTheSocketSystemdPasses() throws {
        let activator = try #require(Self.activator, "systemd-socket-activate is installed by scripts/setup.sh")
        let directory = TemporaryDirectory()
        let socketPath = directory.file("activated.sock")
        // Started as systemd starts a unit: no signal blocked, default
        // signal actions, output on /dev/null.
        let pid = try spawnWithDefaultSignals(activator, ["-l", socketPath, "--fdname=control", BuiltTool.path, "run",
                                                          "--defaults-file", directory.file("d.json"),
                                                          "--locale-file", directory.file("locale"),
                                                          "--zone-file", directory.file("localtime")])
        var reaped = false
        defer {
            if !reaped {
                kill(pid, SIGTERM)
                _ = exitStatus(of: pid)
            }
        }
        // Listening, not just bound: the file appears at bind(), and a
        // connect() before the activator's listen() is refused, which the
        // load of every suite at once makes likely.
        #expect(eventually { Self.isListening(socketPath) }, "systemd-socket-activate listens")
        // The first connection starts mainloop on fd 3; it answers on the
        // socket it did not bind.
        let reply = try ControlClient.send(["query": "state"], to: socketPath)
        #expect(reply["ok"] == .bool(true) && reply["state"] == .string("active"))
        #expect(try ControlClient.send(["lifecycle": "home"], to: socketPath)["state"] == .string("suspended"))
        kill(pid, SIGTERM)
        reaped = true
        #expect(exitStatus(of: pid) == 0)
        #expect(access(socketPath, F_OK) == 0, "the socket file is systemd's: mainloop does not remove it")
    }

    /// Whether a Unix-domain socket bound to `path` listens: its line in
    /// `/proc/net/unix` has `__SO_ACCEPTCON` (0x10000) in its flags.
    /// Read to the end: a /proc file reports no size, and a table longer
    /// than one read (many sockets open beside the test) was cut short.
    static func isListening(_ path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: "/proc/net/unix"), let data = try? file.readToEnd() else { return false }
        let table = String(decoding: data, as: UTF8.self)
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[7] == path, let flags = Int(fields[3], radix: 16) else { return false }
            return flags & 0x10000 != 0
        }
    }

    /// The wait above tells a bound socket from a listening one.
    @Test func isListeningTellsBoundFromListening() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("bound.sock")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        #expect(UnixSocketAddress.with(path) { bind(fd, $0, $1) } == 0)
        #expect(!Self.isListening(path), "bound only")
        #expect(listen(fd, 1) == 0)
        #expect(Self.isListening(path))
    }

    @Test func refusesADescriptorThatIsNotAListeningUnixStreamSocket() throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        #expect(throws: SocketError.self) { try SocketActivation.checkListeningUnixStream(pair[0]) }
        let datagram = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(datagram) }
        #expect(throws: SocketError.self) { try SocketActivation.checkListeningUnixStream(datagram) }
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        #expect(throws: SocketError.self) { try SocketActivation.checkListeningUnixStream(pipeEnds[0]) }
        let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(tcp) }
        #expect(listen(tcp, 1) == 0)
        #expect(throws: SocketError.self) { try SocketActivation.checkListeningUnixStream(tcp) }
    }

    @Test func environmentParsing() throws {
        #expect(try SocketActivation.parse(pid: nil, fds: "1", names: nil, ownPID: 5).isEmpty)
        #expect(try SocketActivation.parse(pid: "6", fds: "1", names: nil, ownPID: 5).isEmpty, "for another process")
        let two = try SocketActivation.parse(pid: "5", fds: "2", names: "metrics:control", ownPID: 5)
        #expect(two.map(\.fileDescriptor) == [3, 4] && two.map(\.name) == ["metrics", "control"])
        #expect(try SocketActivation.controlSocket(in: two) == 4)
        let unnamed = try SocketActivation.parse(pid: "5", fds: "2", names: nil, ownPID: 5)
        #expect(throws: SocketError.self) { try SocketActivation.controlSocket(in: unnamed) }
        #expect(throws: SocketError.self) { try SocketActivation.parse(pid: "5", fds: "2", names: "one", ownPID: 5) }
        #expect(throws: SocketError.invalidConfiguration("LISTEN_PID='x' is not a process id")) {
            try SocketActivation.parse(pid: "x", fds: "1", names: nil, ownPID: 5)
        }
        #expect(throws: SocketError.self) { try SocketActivation.parse(pid: "5", fds: "-1", names: nil, ownPID: 5) }
    }
}
