import Foundation
import Glibc
import MainLoopKit
import MainLoopJSON
import Testing
import TestSupport

/// The service's *environment* turned hostile: the files it
/// watches, the pipe its logs go to, the variables and values other
/// processes leave, a second instance. Each test runs a real `mainloop run`.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct HostileEnvironmentTests {
    /// What a watched file is replaced with.
    enum Replacement: String, CaseIterable, CustomTestStringConvertible {
        case fifo, deviceLink, directory, hugeFile, symlinkLoop
        var testDescription: String { rawValue }

        /// Puts the replacement at `path` in one rename (or symlink).
        func install(at path: String, in directory: TemporaryDirectory) {
            let staged = directory.file("staged-\(rawValue)")
            switch self {
            case .fifo: #expect(mkfifo(staged, 0o600) == 0)
            case .deviceLink: #expect(symlink("/dev/zero", staged) == 0)
            case .directory:
                #expect(mkdir(staged, 0o700) == 0)
                unlink(path)  // rename replaces a file only by a file
            case .hugeFile:
                // Sparse: 600 MB that cost nothing to make, and seconds to read.
                let fd = open(staged, O_WRONLY | O_CREAT, 0o600)
                #expect(ftruncate(fd, 600 << 20) == 0)
                close(fd)
            case .symlinkLoop:
                #expect(symlink(path, staged) == 0)  // once renamed, it points at itself
            }
            #expect(rename(staged, path) == 0)
        }
    }

    /// The watched file of each source, by its name in the service's directory.
    static let watchedFiles = ["locale", "d.json", "localtime"]

    /// Item 1: replaced by a FIFO, a link to /dev/zero, a directory, a huge
    /// file or a symlink loop, a watched file neither blocks nor grows the
    /// service: it keeps answering, keeps its last good values, logs the
    /// problem and stops on SIGTERM.
    @Test(arguments: watchedFiles, Replacement.allCases)
    func aWatchedFileReplacedByAnythingNeitherBlocksNorGrowsTheService(file: String, replacement: Replacement) throws {
        let directory = TemporaryDirectory()
        writeFile(directory.file("locale"), "LANG=fr_FR.UTF-8\n")
        writeFile(directory.file("d.json"), #"{"fontSize": 12}"# + "\n")
        copyFile("/usr/share/zoneinfo/Europe/Paris", directory.file("localtime"))
        let log = directory.file("log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let service = try ServiceProcess(directory: directory, standardError: FileHandle(forWritingAtPath: log) as Any)
        #expect(service.firstOKReply(within: 5) != nil)
        replacement.install(at: directory.file(file), in: directory)
        // The watcher has seen it once the problem is logged; a blocked
        // loop would log nothing and answer nothing.
        let logged = eventually(timeout: 10) {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.contains("not a regular file") || text.contains("over the limit") || text.contains("cannot read")
        }
        #expect(logged, "the problem was logged: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let reply = try ControlClient.send(["query": "values"], to: service.socket, timeout: .seconds(2))
        #expect(reply["ok"] == .bool(true), "the service still answers")
        // (A directory cannot replace a file in one rename: the file is
        // removed first, which rightly resets that source.)
        if replacement != .directory {
            let values = reply["values"]?.objectValue
            #expect(values?["locale"] == .string("fr_FR"), "the last good locale stays: \(String(describing: values))")
            #expect(values?["userDefaults"]?.objectValue?["fontSize"] == .number(12), "the last good defaults stay")
        }
        #expect(Self.residentKiB(of: service.process.processIdentifier) < 200_000, "memory did not grow")
        #expect(service.terminate() == 0, "SIGTERM still stops it cleanly")
    }

    /// Item 2: values over the service's limits, left in the files by
    /// another process before start, are refused and counted as at run
    /// time; the service starts with the rest.
    @Test func overLimitValuesPresentAtStartAreRefusedAndTheServiceStarts() throws {
        let directory = TemporaryDirectory()
        var defaults = JSONObject()
        defaults["big"] = .string(String(repeating: "x", count: 17 * 1024))
        defaults[String(repeating: "k", count: 300)] = 1
        for index in 0..<1_100 { defaults["key\(index)"] = .number(Double(index)) }
        writeFile(directory.file("d.json"), JSONValue.object(defaults).jsonText)
        writeFile(directory.file("locale"), "LANG=" + String(repeating: "a", count: 20 * 1024) + "\n")
        let service = try ServiceProcess(directory: directory)
        let stats = try #require(service.firstOKReply(within: 5).flatMap { _ in
            try? ControlClient.send(["query": "stats"], to: service.socket)
        })
        let kinds = stats["kinds"]?.objectValue
        let refusedDefaults = kinds?["userDefaults"]?.objectValue?["refused"]?.numberValue ?? 0
        #expect(refusedDefaults >= 2 + 1_100 - 1_024, "over-limit keys were refused and counted: \(refusedDefaults)")
        #expect(kinds?["locale"]?.objectValue?["refused"] == .number(1), "the 20 KiB locale was refused and counted")
        #expect(service.terminate() == 0)
    }

    /// Item 3: with stderr a pipe that is full and never read, logging
    /// never blocks the loop: the service starts, answers, survives
    /// clients that reset their connections, and stops on SIGTERM.
    @Test func aFullStderrThatNobodyReadsNeverBlocksTheLoop() throws {
        let stderrPipe = Pipe()
        let writeEnd = stderrPipe.fileHandleForWriting.fileDescriptor
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
        let filler = [UInt8](repeating: UInt8(ascii: "#"), count: 4096)
        while write(writeEnd, filler, filler.count) > 0 {}  // full: every later write would block
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) & ~O_NONBLOCK)
        let service = try ServiceProcess(standardError: stderrPipe)
        #expect(service.firstOKReply(within: 5) != nil, "the service answers with its stderr full")
        let request = Array(String(repeating: #"{"query":"stats"}"# + "\n", count: 200).utf8)
        for _ in 0..<1_000 {
            // Closing with replies unread resets the connection: one
            // "connection closed" line each, before the rate limit.
            guard let client = try? RawClient(path: service.socket) else { continue }
            client.sendWithoutBlocking(request)
            client.close()
        }
        // (The first tries may meet the connection limit while the resets
        // are being noticed.)
        #expect(service.firstOKReply(within: 5) != nil, "the socket still answers")
        let stopped = Date()
        #expect(service.terminate() == 0)
        #expect(Date().timeIntervalSince(stopped) < 5, "SIGTERM did not wait on the pipe")
    }

    /// Item 4: a foreign uid hammering an open (0666) socket, and a defaults
    /// file rewritten with 100,000 keys, log a bounded number of lines.
    @Test func peersAndFilesCannotFloodTheLog() throws {
        let directory = TemporaryDirectory()
        chmod(directory.path, 0o755)
        let log = directory.file("log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let service = try ServiceProcess(directory: directory, standardError: FileHandle(forWritingAtPath: log) as Any)
        #expect(service.firstOKReply(within: 5) != nil)
        chmod(service.socket, 0o666)
        let flood = TestProcess()
        flood.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        flood.arguments = ["-c", """
            import os, socket, time
            os.setgid(65534); os.setuid(65534)
            end = time.time() + 3
            while time.time() < end:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(\(String(reflecting: service.socket)))
                except OSError:
                    pass
                s.close()
            """]
        try flood.run()
        #expect(flood.waitForExit(), "the connection flood did not end within 60 s")
        var defaults = JSONObject()
        for index in 0..<100_000 { defaults["k\(index)"] = .number(Double(index)) }
        writeFile(directory.file("d.json"), JSONValue.object(defaults).jsonText)
        #expect(eventually(timeout: 20) {
            let stats = try? ControlClient.send(["query": "stats"], to: service.socket)
            let refused = stats?["kinds"]?.objectValue?["userDefaults"]?.objectValue?["refused"]?.numberValue ?? 0
            return refused >= 100_000 - 1_024
        }, "the rewrite was read and its over-limit keys refused")
        let refusedPeers = try ControlClient.send(["query": "stats"], to: service.socket)["refusedPeers"]?.numberValue ?? 0
        #expect(refusedPeers > 100, "the foreign client connected many times: \(refusedPeers)")
        #expect(service.terminate() == 0)
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        let refusals = lines.filter { $0.contains("refused a connection") }.count
        let posts = lines.filter { $0.contains("cannot post") }.count
        #expect(refusals <= 10, "\(refusals) refusal lines")
        #expect(posts <= 10, "\(posts) post-error lines")
    }

    /// Item 5: `WATCHDOG_USEC=1` asks for a ping every half microsecond:
    /// the period gets a floor (said in the log) and the socket answers.
    @Test func aTinyWatchdogPeriodGetsAFloorAndDoesNotStarveTheSocket() throws {
        let directory = TemporaryDirectory()
        let listener = try NotifyListener(path: directory.file("notify"))
        let log = directory.file("log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let service = try ServiceProcess(directory: directory, standardError: FileHandle(forWritingAtPath: log) as Any,
                                         environment: ["NOTIFY_SOCKET": directory.file("notify"), "WATCHDOG_USEC": "1"])
        #expect(!listener.until("READY=1", timeout: 5).isEmpty)
        for _ in 0..<20 {
            let reply = try ControlClient.send(["query": "state"], to: service.socket, timeout: .seconds(2))
            #expect(reply["ok"] == .bool(true))
        }
        #expect(service.terminate() == 0)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("instead (the floor)"), "the floor is logged: \(text)")
    }

    /// Item 6: two services started at the same moment on one path: one
    /// serves it, the other exits with an error, every time.
    @Test func twoServicesStartedTogetherOnOnePathLeaveExactlyOne() throws {
        for trial in 0..<10 {
            let directory = TemporaryDirectory()
            let errors = [Pipe(), Pipe()]
            let services = try errors.map {
                try ServiceProcess(directory: directory, standardError: $0, waitForSocket: false)
            }
            #expect(eventually(timeout: 10) { services.contains { !$0.process.isRunning } },
                    "trial \(trial): one of the two gave up")
            let running = services.filter(\.process.isRunning)
            #expect(running.count == 1, "trial \(trial): \(running.count) still running")
            let reply = try? ControlClient.send(["query": "state"], to: directory.file("s.sock"))
            #expect(reply?["ok"] == .bool(true), "trial \(trial): the path is served")
            for (service, pipe) in zip(services, errors) where !service.process.isRunning {
                #expect(service.process.terminationStatus != 0)
                let message = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
                #expect(message.contains("s.sock"), "the loser says which path: \(message)")
            }
            for service in running { #expect(service.terminate() == 0) }
            #expect(!FileManager.default.fileExists(atPath: directory.file("s.sock.lock")), "the claim is released")
        }
    }

    /// Item 7: a request that is not valid UTF-8 is refused with an error
    /// reply; two ids that differ only in invalid bytes never meet.
    @Test func aRequestThatIsNotUTF8IsRefused() throws {
        let service = try ServiceProcess()
        #expect(service.firstOKReply(within: 5) != nil)
        for byte: UInt8 in [0xFF, 0xFE] {
            let line = Array(#"{"system":{"accessory":{"id":"a"#.utf8) + [byte] + Array(#"","connected":true}}}"#.utf8) + [10]
            let reply = try ControlClient.exchange(line, path: service.socket)
            #expect(reply.contains(#""ok":false"#) && reply.contains("UTF-8"), "\(reply)")
        }
        let values = try ControlClient.send(["query": "values"], to: service.socket)["values"]?.objectValue
        #expect(values?["accessory"] == .object(JSONObject()), "nothing was connected: \(String(describing: values))")
        #expect(service.terminate() == 0)
    }

    /// Item 8: what a SIGKILLed run left (a metrics temporary, a staging
    /// directory) is removed by the next run; a live process's is kept.
    @Test func leftoversOfAKilledRunAreCleanedUp() throws {
        let directory = TemporaryDirectory()
        let dead = TestProcess()
        dead.executableURL = URL(fileURLWithPath: "/bin/true")
        try dead.run()
        #expect(dead.waitForExit())
        let deadPID = dead.processIdentifier
        let metrics = directory.file("metrics.prom")
        let deadTemporary = metrics + ".tmp-\(deadPID)-42"
        let liveTemporary = metrics + ".tmp-\(getpid())-42"
        let deadStaging = directory.file(".ml\(String(deadPID, radix: 16))-AbCdEf")
        for file in [deadTemporary, liveTemporary] { _ = FileManager.default.createFile(atPath: file, contents: Data()) }
        #expect(mkdir(deadStaging, 0o700) == 0)
        // A socket a dead server staged beside the path (a private parent).
        let deadStagedSocket = directory.file(".ml\(String(deadPID, radix: 16))-1234abcd")
        let staged = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(UnixSocketAddress.with(deadStagedSocket) { bind(staged, $0, $1) } == 0)
        close(staged)
        let service = try ServiceProcess(directory: directory, extraArguments: ["--metrics-file", metrics])
        #expect(service.firstOKReply(within: 5) != nil)
        #expect(!FileManager.default.fileExists(atPath: deadTemporary), "the dead writer's temporary was removed")
        #expect(!FileManager.default.fileExists(atPath: deadStaging), "the dead server's staging directory was removed")
        #expect(!FileManager.default.fileExists(atPath: deadStagedSocket), "and so was its staged socket")
        #expect(FileManager.default.fileExists(atPath: liveTemporary), "a live process's temporary is kept")
        #expect(service.terminate() == 0)
    }

    /// Item 9: a relative `--file` creates its directories under the
    /// working directory, never at `/`; a relative XDG_CONFIG_HOME is
    /// ignored, as the XDG base directory spec says.
    @Test func relativePathsStayUnderTheWorkingDirectory() throws {
        let directory = TemporaryDirectory()
        let component = "mainloop-relative-\(getpid())"
        defer { rmdir("/" + component + "/nested"); rmdir("/" + component) }
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: BuiltTool.path)
        process.arguments = ["defaults", "--file", "\(component)/nested/d.json", "write", "k", "1"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        try process.run()
        #expect(process.waitForExit())
        #expect(process.statusIfEnded == 0)
        #expect(FileManager.default.fileExists(atPath: directory.file("\(component)/nested/d.json")))
        #expect(!FileManager.default.fileExists(atPath: "/" + component), "nothing was created at /")
        let home = TemporaryDirectory()
        let relative = TestProcess()
        relative.executableURL = URL(fileURLWithPath: BuiltTool.path)
        relative.arguments = ["defaults", "write", "k", "2"]
        relative.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        relative.environment = ["XDG_CONFIG_HOME": component + "-xdg", "HOME": home.path]
        try relative.run()
        #expect(relative.waitForExit())
        #expect(relative.statusIfEnded == 0)
        #expect(FileManager.default.fileExists(atPath: home.file(".config/mainloop/mainloop.json")),
                "the relative XDG_CONFIG_HOME was ignored for $HOME/.config")
        #expect(!FileManager.default.fileExists(atPath: "/" + component + "-xdg"))
    }

    /// Item 10: `ctl`'s timeout is a deadline for the whole reply, however
    /// slowly a server trickles it, and a reply has a size bound.
    @Test func theClientsTimeoutIsADeadlineAndItsReplyIsBounded() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("trickle.sock")
        let server = try TrickleServer(path: path)
        let start = Date()
        #expect(throws: ControlClient.Failure.self) {
            try ControlClient.send(["query": "state"], to: path, timeout: .seconds(1))
        }
        #expect(Date().timeIntervalSince(start) < 3, "the 1 s deadline held against a trickle")
        server.mode = .flood
        do {
            _ = try ControlClient.send(["query": "state"], to: path, timeout: .seconds(30), maxReplyBytes: 100_000)
            Issue.record("an endless reply was accepted")
        } catch {
            #expect(error.description.contains("longer than"), "\(error)")
        }
    }

    /// A server that streams faster than the client reads never made
    /// `recv` wait, and the deadline was checked only when it waited; every
    /// read also searched the whole reply again for its newline, so the
    /// client fell further behind with each chunk. It read for as long as
    /// the server sent, whatever the deadline.
    @Test func theDeadlineHoldsAgainstAServerThatNeverStopsSending() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("flood.sock")
        let server = try TrickleServer(path: path)
        server.mode = .flood
        do {
            _ = try ControlClient.send(["query": "state"], to: path, timeout: .seconds(1), maxReplyBytes: 1 << 40)
            Issue.record("an endless reply was accepted")
        } catch {
            #expect(error.description.contains("within the time limit"), "\(error)")
        }
    }

    /// `ctl --timeout SECONDS` sets the deadline; a value that is not a
    /// positive number of seconds is a usage error.
    @Test func ctlTakesItsDeadlineFromTimeout() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("trickle.sock")
        let server = try TrickleServer(path: path)
        defer { withExtendedLifetime(server) {} }
        let slow = try BuiltTool.run(["ctl", "--socket", path, "--timeout", "0.5", "state"])
        #expect(slow.status == 2, "\(slow)")
        #expect(slow.error.contains("within the time limit"), "\(slow.error)")
        for bad in ["0", "-1", "soon", "nan", "100000"] {
            let refused = try BuiltTool.run(["ctl", "--socket", path, "--timeout", bad, "state"])
            #expect(refused.status == 64, "--timeout \(bad): \(refused)")
            #expect(refused.error.contains("--timeout"), "\(refused.error)")
        }
    }
}

extension HostileEnvironmentTests {
    /// VmRSS of a process, in KiB (0 if unreadable).
    static func residentKiB(of pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// A Unix-socket server (the test's own thread) that answers every client
/// with a reply that never ends: one byte every 50 ms (`trickle`) or as
/// fast as the client reads (`flood`). Stops after 30 s.
final class TrickleServer: @unchecked Sendable {
    enum Mode { case trickle, flood }
    private let lock = NSLock()
    private var storedMode = Mode.trickle
    var mode: Mode {
        get { lock.withLock { storedMode } }
        set { lock.withLock { storedMode = newValue } }
    }
    private let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let bound = withUnixAddress(path) { [fd] in bind(fd, $0, $1) }
        guard bound == 0, listen(fd, 8) == 0 else { throw TestFailure("cannot listen on \(path)") }
        Thread.detachNewThread { [self] in serve() }
    }

    private func serve() {
        let end = Date().addingTimeInterval(30)
        while Date() < end {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            Thread.detachNewThread { [self] in
                defer { close(client) }
                let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 65_536)
                while Date() < end {
                    if mode == .trickle {
                        guard send(client, chunk, 1, Int32(MSG_NOSIGNAL)) == 1 else { return }
                        usleep(50_000)
                    } else {
                        guard send(client, chunk, chunk.count, Int32(MSG_NOSIGNAL)) > 0 else { return }
                    }
                }
            }
        }
    }

    deinit { close(fd) }
}
