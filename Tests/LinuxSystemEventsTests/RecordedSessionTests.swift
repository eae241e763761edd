import Foundation
import Glibc
import MainLoopJSON
import MainLoopKit
import Testing
import TestSupport

/// `mainloop run --record` on live sessions driven by real sources, then
/// `mainloop replay --check --expect`: the replay prints the live lines,
/// every one.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(3))) struct RecordedSessionTests {
    /// A recorded service: its output and recording files, and helpers.
    struct Session {
        let service: ServiceProcess
        let output: String
        let recording: String
        var directory: TemporaryDirectory { service.directory }

        init(config: String? = nil, environment: [String: String] = [:], systemBus: Bool = false,
             directory: TemporaryDirectory = TemporaryDirectory(), extraArguments: [String] = []) throws {
            output = directory.file("out.jsonl")
            recording = directory.file("session.jsonl")
            writeFile(directory.file("locale"), "LANG=en_US.UTF-8\n")
            writeFile(directory.file("d.json"), #"{"fontSize":12}"#)
            var arguments = ["--record", recording, "--no-devices"] + extraArguments
            if !systemBus { arguments.append("--no-system-bus") }
            if let config {
                writeFile(directory.file("config.json"), config)
                arguments += ["--config", directory.file("config.json")]
            }
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            service = try ServiceProcess(directory: directory, extraArguments: arguments,
                                         standardOutput: try #require(FileHandle(forWritingAtPath: output)),
                                         environment: environment)
        }

        func ctl(_ words: String...) throws {
            let result = try BuiltTool.run(["ctl", "--socket", service.socket] + words)
            #expect(result.status == 0, "ctl \(words): \(result)")
        }

        func observations() -> [JSONObject] {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)).objectValue }
        }

        func seen(_ key: String, _ value: JSONValue, count: Int = 1, timeout: Double = 10) -> Bool {
            eventually(timeout: timeout) { observations().filter { $0[key] == value }.count >= count }
        }

        /// The held slots the state query reports.
        func heldSlots() -> Double {
            let state = (try? ControlClient.send(["query": "state"], to: service.socket)) ?? [:]
            return state["heldSlots"]?.numberValue ?? 0
        }

        /// Stops the service, then replays the recording against what it printed.
        func stopAndCheck() throws {
            #expect(service.terminate() == 0)
            let live = observations()
            #expect(live.allSatisfy { $0["time"] == nil }, "a recorded session's lines carry no wall-clock time")
            #expect(live.last?["state"] == "notRunning")
            let check = try BuiltTool.run(["replay", "--check", "--expect", output, recording])
            let recorded = (try? String(contentsOfFile: recording, encoding: .utf8)) ?? ""
            #expect(check.status == 0, "\(check.output)\(check.error)\nrecording:\n\(recorded)")
            // Byte for byte: the replay prints the very text the service printed.
            let replayed = try BuiltTool.run(["replay", recording])
            #expect(replayed.status == 0 && replayed.output == (try? String(contentsOfFile: output, encoding: .utf8)),
                    "the replay's text differs from the live text")
        }
    }

    /// Files written by other processes, the socket's lifecycle commands
    /// and events, app timers (one held over a suspension), a background
    /// task that expires, a custom kind, SIGTSTP and SIGCONT.
    @Test func theReplayOfARecordedSessionPrintsTheLiveLines() throws {
        let session = try Session(config: #"""
            {"backgroundTaskLimit": 0.4, "expirationLead": 0.2,
             "customKinds": [{"name": "mood", "shape": "lastValue", "default": "calm", "notification": "moodDidChange"}]}
            """#)
        defer { _ = session.service.terminate() }
        let defaults = session.directory.file("d.json"), locale = session.directory.file("locale")
        try session.ctl("app", #"{"timer": "tick", "after": 0.05}"#)
        #expect(session.seen("timer", "tick"))
        try session.ctl(#"{"system": {"mood": "happy"}}"#)
        try session.ctl("app", #"{"timer": "held", "after": 0.05}"#)
        try session.ctl("app", #"{"beginBackgroundTask": "upload"}"#)
        try session.ctl("home")
        #expect(session.seen("expired", "upload"), "the background task expires 0.2 s before its 0.4 s limit")
        #expect(session.seen("state", "suspended"))
        try session.ctl("orientation", "landscapeLeft")
        try session.ctl(#"{"system": {"mood": "sad"}}"#)
        #expect(try BuiltTool.run(["defaults", "--file", defaults, "write", "fontSize", "14"]).status == 0)
        writeFile(locale, "LANG=fr_FR.UTF-8\n")
        #expect(eventually { session.heldSlots() >= 4 }, "orientation, mood, defaults and locale held")
        try session.ctl("foreground")
        #expect(session.seen("timer", "held"), "the timer held over the suspension fires on the resume")
        #expect(try BuiltTool.run(["ctl", "--socket", session.service.socket, "launch"]).status == 1)
        // Job control, as a shell does it: SIGCONT once the process is stopped.
        let pid = session.service.process.processIdentifier
        kill(pid, SIGTSTP)
        #expect(eventually { processState(pid) == "T" }, "SIGTSTP stops the process")
        #expect(try BuiltTool.run(["defaults", "--file", defaults, "write", "volume", "3"]).status == 0)
        writeFile(locale, "LANG=de_DE.UTF-8\n")
        kill(pid, SIGCONT)
        #expect(session.seen("callback", "didBecomeActive", count: 3))
        try session.ctl("input", "tap-1")
        #expect(session.seen("input", "tap-1"))
        let live = session.observations()
        for (key, value) in [("notification", "userDefaultsDidChange"), ("notification", "currentLocaleDidChange"),
                             ("notification", "moodDidChange"), ("rejected", "launch")] as [(String, JSONValue)] {
            #expect(live.contains { $0[key] == value }, "no \(key) \(value) line live")
        }
        #expect(live.contains { $0["locale"] == "de_DE" }, "the locale written while the process was stopped")
        try session.stopAndCheck()
    }

    /// The dbusmock UPower, iio-sensor-proxy and logind templates on a
    /// private bus: their changes, live and held, are recorded and replayed.
    @Test func theReplayOfASessionOnTheSystemBusPrintsTheLiveLines() throws {
        let bus = try PrivateSystemBus()
        try SystemBusSourcesTests.startDaemons(bus)
        let session = try Session(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "XDG_SESSION_ID": "c1"],
                                  systemBus: true)
        defer { _ = session.service.terminate() }
        #expect(eventually(timeout: 10) {
            (try? ControlClient.send(["query": "values"], to: session.service.socket))?["values"]?.objectValue?["batteryLevel"]
                == .number(0.8)
        }, "the battery level read at start")
        try SystemBusSourcesTests.setBattery(bus, percentage: 70)
        #expect(eventually { session.observations().contains { $0["notification"] == "batteryLevelDidChange" } })
        try session.ctl("home")
        try SystemBusSourcesTests.setBattery(bus, percentage: 60)
        try SystemBusSourcesTests.setOrientation(bus, "bottom-up")
        try SystemBusSourcesTests.setLocked(bus, true)
        #expect(eventually { session.heldSlots() >= 3 }, "battery, orientation and protected data held")
        try session.ctl("foreground")
        #expect(session.seen("callback", "didBecomeActive", count: 2))
        try SystemBusSourcesTests.setProximity(bus, near: true)
        #expect(eventually { session.observations().contains { $0["notification"] == "proximityStateDidChange" } })
        try session.stopAndCheck()
    }

    /// Memory pressure from a PSI-style source (a FIFO, as systemd's
    /// MemoryPressureWatch= allows): warnings while the app runs and while
    /// it is suspended, then sustained pressure purges it.
    @Test func theReplayOfASessionUnderMemoryPressurePrintsTheLiveLines() throws {
        let directory = TemporaryDirectory()
        let fifo = directory.file("pressure")
        #expect(mkfifo(fifo, 0o600) == 0)
        let session = try Session(environment: ["MEMORY_PRESSURE_WATCH": fifo], directory: directory,
                                  extraArguments: ["--memory-pressure-purge-after", "0.3"])
        defer { _ = session.service.terminate() }
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        #expect(writer >= 0)
        defer { close(writer) }
        func report() { _ = write(writer, "x", 1) }
        report()
        #expect(session.seen("memoryWarning", ["deliveredToApp": true]))
        try session.ctl("home")
        report()
        #expect(session.seen("memoryWarning", ["deliveredToApp": false]))
        // Reported for longer than 0.3 s while suspended: purged.
        #expect(eventually {
            report()
            usleep(50_000)
            return session.observations().contains { $0["state"] == "notRunning" }
        }, "sustained pressure purges the suspended app")
        try session.stopAndCheck()
    }

    /// Random timings: two clients pipelining batches of requests (one
    /// write, several lines), a repeating timer, zero-delay and short
    /// timers, posted work, lifecycle commands, and files written by other
    /// processes, all racing; seeded, so a failure can be rerun.
    @Test(arguments: [7, 8, 9])
    func aSessionOfRacingInputsReplaysExactly(seed: Int) throws {
        let session = try Session()
        defer { _ = session.service.terminate() }
        try session.ctl("app", #"{"timer": "repeating", "every": 0.003}"#)
        let socket = session.service.socket
        let finished = LockedCounter()
        let clients = [seed, seed + 100].map { clientSeed in
            TestThread { if Self.raceRequests(socket: socket, seed: clientSeed) { finished.increment() } }
        }
        var generator = SeededGenerator(seed: UInt64(seed))
        for round in 0..<6 {
            _ = try BuiltTool.run(["defaults", "--file", session.directory.file("d.json"), "write", "k",
                                   "\(Int.random(in: 0..<1000, using: &generator))"])
            writeFile(session.directory.file("locale"), "LANG=\(["fr_FR", "de_DE", "ja_JP"][round % 3]).UTF-8\n")
            usleep(UInt32.random(in: 1_000..<30_000, using: &generator))
        }
        for client in clients { client.join() }
        #expect(finished.value == 2, "both clients sent all their batches")
        // Brought back to active, or rejected as it is there already: a line either way.
        _ = try BuiltTool.run(["ctl", "--socket", socket, "foreground"])
        try session.stopAndCheck()
        let steps = ((try? String(contentsOfFile: session.recording, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(steps.count > 600, "two clients' 150 batches each, and the files: \(steps.count) lines")
        #expect(steps.contains { $0.contains(#""sameTurn":true"#) }, "pipelined lines are marked as one turn")
        #expect(steps.contains { $0.contains(#""userDefaults""#) } && steps.contains { $0.contains(#""locale""#) })
    }

    /// One client's racing batches: each a single write of 1 to 4 request
    /// lines, then its replies read.
    static func raceRequests(socket: String, seed: Int) -> Bool {
        var generator = SeededGenerator(seed: UInt64(seed))
        let connection: RawConnection
        do {
            connection = try RawConnection(path: socket)
        } catch {
            Issue.record("client \(seed): \(error)")
            return false
        }
        let orientations = ["portrait", "landscapeLeft", "landscapeRight", "faceUp", "faceDown"]
        for round in 0..<150 {
            var lines: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4: lines.append(#"{"system":{"orientation":"\#(orientations.randomElement(using: &generator)!)"}}"#)
                case 4: lines.append(#"{"lifecycle":"home"}"#)
                case 5: lines.append(#"{"lifecycle":"foreground"}"#)
                case 6: lines.append(#"{"input":"t\#(seed)-\#(round)"}"#)
                case 7: lines.append(#"{"app":{"post":"p\#(seed)-\#(round)"}}"#)
                case 8: lines.append(#"{"app":{"timer":"z\#(seed)-\#(round)","after":0}}"#)
                default:
                    let after = Double(Int.random(in: 0..<10_000, using: &generator)) / 1_000_000
                    lines.append(#"{"app":{"timer":"a\#(seed)-\#(round)","after":\#(after)}}"#)
                }
            }
            guard connection.exchange(lines) else {
                Issue.record("client \(seed): the service closed the connection in round \(round)")
                return false
            }
            usleep(UInt32.random(in: 0..<4_000, using: &generator))
        }
        return true
    }

    /// A recording cut off (the service was killed) or edited by hand is
    /// refused with the line named; `--partial` replays the whole steps of a cut one.
    @Test func aCutOrEditedRecordingIsRefusedNamingItsLine() throws {
        let directory = TemporaryDirectory()
        let header = #"{"recording":1,"config":{},"initial":{}}"#
        var counter = 0
        let steps = [#"{"at":0,"lifecycle":"launch"}"#, #"{"at":0.5,"system":{"orientation":"faceUp"}}"#]
        func replay(_ text: String, _ extra: [String] = []) throws -> (status: Int32, output: String) {
            counter += 1
            let file = directory.file("r\(counter).jsonl")
            writeFile(file, text)
            let result = try BuiltTool.run(["replay"] + extra + [file])
            return (result.status, result.output + result.error)
        }
        let whole = try replay(([header] + steps + [#"{"end":"stopped"}"#]).joined(separator: "\n") + "\n")
        #expect(whole.status == 0 && whole.output.contains("orientationDidChange"), "\(whole)")

        let killed = ([header] + steps).joined(separator: "\n") + "\n"
        let refused = try replay(killed)
        #expect(refused.status != 0 && refused.output.contains("line 3") && refused.output.contains("--partial"), "\(refused)")
        let partial = try replay(killed, ["--partial"])
        #expect(partial.status == 0 && partial.output.contains("orientationDidChange"), "\(partial)")

        let cutInsideALine = [header, steps[0], #"{"at":0.5,"sys"#].joined(separator: "\n")
        let cut = try replay(cutInsideALine)
        #expect(cut.status != 0 && cut.output.contains("line 3"), "\(cut)")
        #expect(try replay(cutInsideALine, ["--partial"]).status == 0)

        let edited = try replay([header, steps[0], #"{"at":0.25,"lifecycle":"dance"}"#, #"{"end":"stopped"}"#]
            .joined(separator: "\n") + "\n")
        #expect(edited.status != 0 && edited.output.contains("line 3") && edited.output.contains("dance"), "\(edited)")
        let newer = try replay(#"{"recording":2}"# + "\n" + #"{"end":"stopped"}"# + "\n")
        #expect(newer.status != 0 && newer.output.contains("line 1") && newer.output.contains("newer"), "\(newer)")

        // The live output a recording is checked against is read as strictly.
        let recording = directory.file("whole.jsonl"), live = directory.file("live.jsonl")
        writeFile(recording, ([header] + steps + [#"{"end":"stopped"}"#]).joined(separator: "\n") + "\n")
        writeFile(live, #"{"at":0,"state":"inactive"}"# + "\n" + #"{"at":0,"state""# + "\n")
        let badLive = try BuiltTool.run(["replay", "--check", "--expect", live, recording])
        #expect(badLive.status != 0 && (badLive.output + badLive.error).contains("live.jsonl: line 2: invalid JSON"),
                "\(badLive)")
    }
}

/// A client that writes several request lines at once and reads their replies.
private final class RawConnection {
    private let client: RawClient

    init(path: String) throws { client = try RawClient(path: path) }
    deinit { client.close() }

    /// Writes `lines` in one write and reads one reply line for each; false
    /// when the service went away.
    func exchange(_ lines: [String]) -> Bool {
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        var replies = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while replies < lines.count {
            let count = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            replies += buffer[..<count].count(where: { $0 == UInt8(ascii: "\n") })
        }
        return true
    }
}

/// A count shared by threads.
private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

/// A recording whose writes fail (a file size limit stands in for a full
/// disk: the same failed write, EFBIG for ENOSPC) is reported once, and
/// the service goes on serving.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct RecordingWriteFailureTests {
    @Test func aFailedWriteIsReportedOnceAndTheServiceKeepsServing() throws {
        let directory = TemporaryDirectory()
        let errors = directory.file("err.log")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        // SIGXFSZ ignored (an ignored signal stays ignored across exec), so
        // a write past the limit fails instead of killing the process;
        // files larger than 32 blocks of 512 bytes cannot be written.
        let service = try ServiceProcess(directory: directory,
                                         extraArguments: ["--record", directory.file("session.jsonl"),
                                                          "--no-system-bus", "--no-devices"],
                                         prefix: ["/bin/sh", "-c", #"trap "" XFSZ; ulimit -f 32; exec "$0" "$@""#],
                                         standardError: try #require(FileHandle(forWritingAtPath: errors)))
        defer { _ = service.terminate() }
        let orientations = ["faceUp", "portrait"]
        let connection = try RawConnection(path: service.socket)
        for round in 0..<40 {
            let requests = (0..<15).map { #"{"system":{"orientation":"\#(orientations[($0 + round) % 2])"}}"# }
            #expect(connection.exchange(requests))
        }
        #expect(try ControlClient.send(["query": "state"], to: service.socket)["state"] == "active", "still serving")
        #expect(service.terminate() == 0)
        let log = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        let reports = log.split(separator: "\n").filter { $0.contains("writing the recording failed") }
        #expect(reports.count == 1, "\(log)")
        #expect(reports.first?.contains("File too large") == true, "\(log)")
        let size = (try? FileManager.default.attributesOfItem(atPath: directory.file("session.jsonl"))[.size] as? Int) ?? 0
        #expect(size <= 32 * 512)
        // What was written is a recording cut off at a whole step or inside
        // one: named with its line, replayable with --partial.
        let replay = try BuiltTool.run(["replay", directory.file("session.jsonl")])
        #expect(replay.status != 0 && replay.error.contains("line "), "\(replay)")
        #expect(try BuiltTool.run(["replay", "--partial", directory.file("session.jsonl")]).status == 0)
    }
}
