import AppLifecycle
import Foundation
import Glibc
import MainLoopKit
import Logging
import MainLoop
import MainLoopJSON
import Testing
import TestSupport

/// The observation lines a service printed, parsed.
func observationLines(_ path: String) -> [JSONObject] {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { (try? JSONValue.parse(String($0)))?.objectValue }
}

/// The process's state letter from /proc (T: stopped).
func processState(_ pid: pid_t) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    return stat[stat.index(close, offsetBy: 2)...].first
}

/// Ctrl-Z and `fg` as the home button and the app
/// switcher; memory pressure as the iOS memory warning.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct JobControlAndMemoryPressureTests {
    /// SIGTSTP suspends the app and stops the process; another process
    /// writes defaults three times and the locale file while it is stopped;
    /// SIGCONT brings the app back with one merged notification per kind
    /// after willEnterForeground.
    @Test func stopAndContinueDeliverOneMergedNotificationPerKind() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.file("locale"), "LANG=en_US.UTF-8\n")
        let output = directory.file("out.jsonl")
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        let service = try ServiceProcess(directory: directory,
                                         standardOutput: try #require(FileHandle(forWritingAtPath: output)))
        #expect(service.firstOKReply(within: 5)?["state"] == .string("active"))
        let pid = service.process.processIdentifier
        kill(pid, SIGTSTP)
        #expect(eventually { processState(pid) == "T" }, "SIGTSTP stops the process")
        for value in ["1", "2", "3"] {
            _ = try BuiltTool.run(["defaults", "--file", directory.file("d.json"), "write", "volume", value])
        }
        writeFile(directory.file("locale"), "LANG=fr_FR.UTF-8\n")
        usleep(200_000)
        #expect(processState(pid) == "T", "still stopped while another process wrote")
        kill(pid, SIGCONT)
        #expect(eventually { (try? ControlClient.send(["query": "state"], to: service.socket))?["state"] == .string("active") })
        #expect(service.terminate() == 0)

        let lines = observationLines(output)
        let suspended = try #require(lines.firstIndex { $0["state"] == .string("suspended") }, "\(lines)")
        let after = Array(lines[suspended...])
        let foreground = try #require(after.firstIndex { $0["callback"] == .string("willEnterForeground") })
        let active = try #require(after.firstIndex { $0["callback"] == .string("didBecomeActive") })
        let defaults = after.filter { $0["notification"] == .string("userDefaultsDidChange") }
        #expect(defaults.count == 1, "one merged notification: \(defaults)")
        #expect(defaults.first?["changed"] == .object(["volume": .number(3)]))
        let locale = after.filter { $0["notification"] == .string("currentLocaleDidChange") }
        #expect(locale.count == 1 && locale.first?["locale"] == .string("fr_FR"), "\(locale)")
        for notification in defaults + locale {
            let index = try #require(after.firstIndex(of: notification))
            #expect(index > foreground && index < active, "held, delivered after willEnterForeground: \(after)")
        }
    }

    /// An injected source (a FIFO, which systemd's MemoryPressureWatch=
    /// also allows): each write is a memory warning for a running app;
    /// repeated pressure while suspended purges the app.
    @Test func memoryPressureWarnsAndSustainedPressurePurgesASuspendedApp() throws {
        let directory = TemporaryDirectory()
        let fifo = directory.file("pressure")
        #expect(mkfifo(fifo, 0o600) == 0)
        let output = directory.file("out.jsonl")
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        let service = try ServiceProcess(directory: directory, extraArguments: ["--memory-pressure-purge-after", "0.4"],
                                         standardOutput: try #require(FileHandle(forWritingAtPath: output)),
                                         environment: ["MEMORY_PRESSURE_WATCH": fifo])
        #expect(service.firstOKReply(within: 5)?["state"] == .string("active"))
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        #expect(writer >= 0)
        defer { close(writer) }
        func report() { _ = write(writer, "x", 1) }
        report()
        #expect(eventually { observationLines(output).contains { $0["memoryWarning"] != nil } })
        #expect(try ControlClient.send(["lifecycle": "home"], to: service.socket)["state"] == .string("suspended"))
        report()
        usleep(250_000)
        report()
        usleep(250_000)
        #expect(try ControlClient.send(["query": "state"], to: service.socket)["state"] == .string("suspended"),
                "0.25 s of pressure is not yet sustained")
        report()
        #expect(eventually { (try? ControlClient.send(["query": "state"], to: service.socket))?["state"] == .string("notRunning") },
                "0.5 s of pressure while suspended purges the app")
        #expect(service.terminate() == 0)
        let warnings = observationLines(output).compactMap { $0["memoryWarning"]?.objectValue?["deliveredToApp"] }
        #expect(warnings.first == .bool(true), "the running app got the warning")
        #expect(warnings.dropFirst().allSatisfy { $0 == .bool(false) }, "a suspended app runs no code")
        #expect(!observationLines(output).contains { $0["callback"] == .string("willTerminate") }, "a purge runs no code")
    }

    /// A real PSI trigger, where the kernel allows one: the monitor writes
    /// it and watches it through epoll (no pressure needs to happen).
    @Test(.enabled(if: access("/proc/pressure/memory", R_OK | W_OK) == 0, "this kernel gives no writable /proc/pressure/memory"))
    func aRealPressureStallInformationTriggerIsAccepted() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let loop = thread.loop
        let reports = try OffLoopReleaseTests.onLoop(thread) {
            let application = try Application(loop: loop)
            let monitor = try MemoryPressureMonitor(application: application,
                                                    settings: MemoryPressureSettings(watchPath: "/proc/pressure/memory"),
                                                    logger: Logger(label: "test"))
            defer { monitor.stop() }
            return monitor.reports
        }
        #expect(reports == 0)
        // A trigger the kernel refuses (a window that is not a multiple of
        // 2 s for an unprivileged process, or under 500 ms) is an error.
        let refused = try OffLoopReleaseTests.onLoop(thread) { () -> Bool in
            let application = try Application(loop: loop)
            do {
                _ = try MemoryPressureMonitor(application: application,
                                              settings: MemoryPressureSettings(watchPath: "/proc/pressure/memory",
                                                                               trigger: Array("some 1 1000".utf8)),
                                              logger: Logger(label: "test"))
                return false
            } catch {
                return true
            }
        }
        #expect(refused)
    }

    /// systemd's variables: the watch path (or /dev/null), the base64 trigger.
    @Test func settingsFromSystemdVariables() throws {
        let trigger = "c29tZSAxMDAwMDAgMjAwMDAwMA=="  // "some 100000 2000000"
        let explicit = try MemoryPressureSettings.resolve(watch: "/sys/fs/cgroup/x/memory.pressure", write: trigger,
                                                          cgroupFile: nil, procFile: "/nonexistent")
        #expect(explicit.watchPath == "/sys/fs/cgroup/x/memory.pressure")
        #expect(String(decoding: explicit.trigger, as: UTF8.self) == "some 100000 2000000")
        #expect(try MemoryPressureSettings.resolve(watch: "/dev/null", write: nil, cgroupFile: nil, procFile: "/x").watchPath == nil)
        #expect(try MemoryPressureSettings.resolve(watch: nil, write: nil, cgroupFile: nil, procFile: "/nonexistent").watchPath == nil)
        #expect(throws: MemoryPressureError.self) {
            try MemoryPressureSettings.resolve(watch: nil, write: "not base64!", cgroupFile: nil, procFile: "/x")
        }
    }
}
