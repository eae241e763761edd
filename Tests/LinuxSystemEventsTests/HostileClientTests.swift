import Dispatch
import Foundation
import Glibc
import MainLoopKit
import Logging
import MainLoop
import MainLoopJSON
import Testing
import TestSupport

/// A raw client of a Unix-domain socket: whatever bytes, whenever, however
/// it likes to leave.
final class RawClient {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let status = withUnixAddress(path) { [fd] in connect(fd, $0, $1) }
        guard status == 0 else {
            Glibc.close(fd)
            throw TestFailure( "connect: \(String(cString: strerror(errno)))")
        }
    }

    /// Sends `bytes` without blocking; returns how many the socket took.
    @discardableResult
    func sendWithoutBlocking(_ bytes: [UInt8]) -> Int {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            guard sent > 0 else { break }
            offset += sent
        }
        return offset
    }

    /// Leaves at once: shut down both ways, then closed. A close alone
    /// does not reach the service while another process still holds the
    /// descriptor, as a child another test spawns does between its fork
    /// and its exec; the service then rightly sees a client still there
    /// and handles its lines.
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}

/// The control socket under clients that misbehave.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct HostileClientTests {
    /// Item 1: replies fill the socket buffer, then the client closes
    /// without reading them. The old connection freed itself in `readable()`
    /// and then flushed through a dangling reference (SIGABRT).
    @Test func aClientThatClosesWithUnreadRepliesCannotCrashTheService() throws {
        let service = try ServiceProcess()
        let requests = Array(String(repeating: #"{"query":"stats"}"# + "\n", count: 4_000).utf8)
        for _ in 0..<5 {
            let client = try RawClient(path: service.socket)
            client.sendWithoutBlocking(requests)
            // The service replies until the client's buffer is full: wait
            // for a good part of it to be queued, not for a time.
            #expect(eventually(timeout: 10) {
                var queued: Int32 = 0
                return ioctl(client.fd, UInt(FIONREAD), &queued) == 0 && queued >= 64 * 1024
            }, "replies queued at the client")
            client.sendWithoutBlocking(requests)
            client.close()  // with requests still unread: a reply finds the client gone
        }
        let partial = try RawClient(path: service.socket)
        partial.sendWithoutBlocking(Array((#"{"query":"values"}"# + "\n").utf8))
        var one: UInt8 = 0
        _ = recv(partial.fd, &one, 1, 0)  // read one byte of the reply, then leave
        partial.close()
        usleep(50_000)
        #expect(service.process.isRunning, "the service survived")
        #expect(try ControlClient.send(["query": "state"], to: service.socket)["ok"] == .bool(true))
        #expect(service.terminate() == 0)
    }

    /// Item 12: once a connection is closed, nothing more of it is
    /// processed: the lines a client left when it closed are not handled,
    /// and no send runs on the old fd number. (Replies are batched:
    /// instead of sending the first reply of a batch at once to find out,
    /// the connection asks the socket whether the client closed before it
    /// handles a batch, so none of those lines is handled.)
    @Test func linesBufferedBehindAClosedConnectionAreNotHandled() throws {
        try expectLinesOfAClientThatLeftAreNotHandled(sharingItsSocket: false)
    }

    /// The same while another descriptor of the client's socket is open, as
    /// in a child spawned by another test between its fork and its exec:
    /// the client's leaving must still reach the service.
    @Test func aClientLeavesEvenWhileItsSocketIsSharedWithAnotherProcess() throws {
        try expectLinesOfAClientThatLeftAreNotHandled(sharingItsSocket: true)
    }

    /// A client sends 50 requests and leaves before the service reads:
    /// none is handled and its connection is gone. `sharingItsSocket`: a
    /// second descriptor of the client's socket stays open meanwhile.
    private func expectLinesOfAClientThatLeftAreNotHandled(sharingItsSocket: Bool) throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop(deterministic: true)
        var handled = 0
        let server = try ControlServer(loop: loop, path: directory.file("c.sock"), logger: Logger(label: "test")) { _ in
            handled += 1
            return ["ok": true]
        }
        let client = try RawClient(path: server.path)
        try loop.runUntilIdle()  // accepted
        let shared = sharingItsSocket ? dup(client.fd) : -1
        defer { if shared >= 0 { Glibc.close(shared) } }
        client.sendWithoutBlocking(Array(String(repeating: #"{"query":"state"}"# + "\n", count: 50).utf8))
        client.close()  // gone before the service reads
        try loop.runUntilIdle()
        #expect(handled == 0, "handled \(handled) requests of a client that left")
        #expect(server.connectionCount == 0)
        server.stop()
    }
}

extension HostileClientTests {
    /// The resident memory of process `pid`, in bytes.
    static func residentBytes(of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else { return -1 }
        return kilobytes * 1024
    }

    /// Item 2: a client that pipelines requests and never reads a reply.
    /// The old service buffered every reply (about 1 GB in 30 s); now it
    /// stops reading from that client once its unread replies reach the
    /// bound, and other clients are answered meanwhile.
    @Test func aClientThatNeverReadsItsRepliesCannotGrowTheService() throws {
        let service = try ServiceProcess()
        let pid = service.process.processIdentifier
        let before = Self.residentBytes(of: pid)
        let client = try RawClient(path: service.socket)
        let requests = Array(String(repeating: #"{"query":"stats"}"# + "\n", count: 1_000).utf8)
        var pushed = 0
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            pushed += client.sendWithoutBlocking(requests)
            usleep(1_000)
        }
        let start = Date()
        #expect(try ControlClient.send(["query": "state"], to: service.socket)["ok"] == .bool(true))
        #expect(Date().timeIntervalSince(start) < 2, "another client is answered meanwhile")
        let growth = Self.residentBytes(of: pid) - before
        #expect(growth < 16 << 20, "grew by \(growth >> 20) MB after \(pushed >> 10) KB of requests")
        client.close()
        #expect(service.terminate() == 0)
    }
}

extension HostileClientTests {
    /// Item 6: a second service on the same path used to unlink the first
    /// one's live socket and take the path. Now it refuses, and the first
    /// keeps answering.
    @Test func aSecondServiceCannotTakeOverALiveSocket() throws {
        let first = try ServiceProcess()
        let second = try BuiltTool.run(["run", "--socket", first.socket, "--defaults-file", first.directory.file("d2.json"),
                                        "--locale-file", first.directory.file("locale2"),
                                        "--zone-file", first.directory.file("localtime")],
                                       prefix: ["/usr/bin/timeout", "5"])  // the old code took over and ran on
        #expect(second.status != 0)
        // Refused by the path's claim, or by the liveness probe.
        #expect(second.error.contains("another process") && second.error.contains(first.socket), "\(second.error)")
        #expect(try ControlClient.send(["query": "state"], to: first.socket)["ok"] == .bool(true))
        #expect(first.terminate() == 0)
    }

    /// Item 6: `stop()` unlinks only the socket this server created, not
    /// whatever is at the path by then.
    @Test func stoppingAServerLeavesAnotherServersSocketInPlace() throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop(deterministic: true)
        let path = directory.file("c.sock")
        let first = try ControlServer(loop: loop, path: path, logger: Logger(label: "test")) { _ in ["ok": true] }
        // An operator removed the socket and its claim (the lock
        // file); a second server now owns the path.
        unlink(path)
        unlink(path + ".lock")
        let second = try ControlServer(loop: loop, path: path, logger: Logger(label: "test")) { _ in ["ok": true] }
        first.stop()
        #expect(FileManager.default.fileExists(atPath: path), "the second server's socket is still there")
        #expect(FileManager.default.fileExists(atPath: path + ".lock"), "and so is its claim")
        second.stop()
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Start-up: in a private parent (this user's, mode 0700)
    /// the socket is staged beside its path, with no directory made; in
    /// any other the bind's private directory is removed in the loop's
    /// first turn instead of before the server returns. Either way the
    /// socket has its mode when it appears, and nothing is left beside it:
    /// once the loop turned, when the server stops before any turn, or
    /// when it is released before any turn.
    @Test(arguments: [0o700, 0o755] as [mode_t])
    func stagingLeavesNothingBehindAndTheModeIsSet(parentMode: mode_t) throws {
        let directory = TemporaryDirectory()
        #expect(chmod(directory.path, parentMode) == 0)
        let loop = try MainRunLoop(deterministic: true)
        func staging() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".ml") }
        }
        let turned = try ControlServer(loop: loop, path: directory.file("a.sock"), mode: 0o620,
                                       logger: Logger(label: "test")) { _ in ["ok": true] }
        var status = stat()
        #expect(lstat(directory.file("a.sock"), &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK)
        #expect(status.st_mode & 0o777 == 0o620)
        if parentMode == 0o700 { #expect(try staging().isEmpty, "no directory made in a private parent") }
        try loop.runUntilIdle()
        #expect(try staging().isEmpty, "removed in the first turn")
        let stopped = try ControlServer(loop: loop, path: directory.file("b.sock"), logger: Logger(label: "test")) { _ in ["ok": true] }
        stopped.stop()
        #expect(try staging().isEmpty, "removed by stop() before any turn")
        var released: ControlServer? = try ControlServer(loop: loop, path: directory.file("c.sock"),
                                                         logger: Logger(label: "test")) { _ in ["ok": true] }
        #expect(released != nil)
        released = nil
        #expect(try staging().isEmpty, "removed when released before any turn")
        try loop.runUntilIdle()
        turned.stop()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// Item 13: the server no longer changes the process-wide umask around
    /// `bind`, which raced every other thread creating files. A thread
    /// creates files while servers come and go; every file gets the mode
    /// the process's umask gives it. In a child process: umask is global.
    @Test func creatingAServerNeverChangesTheUmaskOtherThreadsSee() async {
        await #expect(processExitsWith: .success) {
            alarm(30)
            umask(0o022)
            let directory = TemporaryDirectory()
            let loop = try MainRunLoop(deterministic: true)
            // Shared with the creator thread under a lock (ThreadSanitizer
            // reported the plain fields as a race and the child exited 66).
            final class Flag: @unchecked Sendable {
                private let lock = NSLock()
                private var stopped = false, wrong = 0
                var stop: Bool {
                    get { lock.withLock { stopped } }
                    set { lock.withLock { stopped = newValue } }
                }
                var wrongModes: Int { lock.withLock { wrong } }
                func countWrongMode() { lock.withLock { wrong += 1 } }
            }
            let flag = Flag()
            let files = directory.path
            let finished = DispatchSemaphore(value: 0)
            let creator = Thread {
                defer { finished.signal() }
                var index = 0
                while !flag.stop {
                    let file = files + "/f\(index % 64)"
                    unlink(file)
                    let fd = open(file, O_CREAT | O_WRONLY, 0o666)
                    var status = stat()
                    if fd >= 0, fstat(fd, &status) == 0, status.st_mode & 0o777 != 0o644 { flag.countWrongMode() }
                    close(fd)
                    index += 1
                }
            }
            creator.start()
            for round in 0..<500 {
                let server = try ControlServer(loop: loop, path: directory.file("s\(round % 4).sock"),
                                               logger: Logger(label: "test")) { _ in ["ok": true] }
                server.stop()
            }
            flag.stop = true
            finished.wait()  // the creator's last file is checked
            precondition(flag.wrongModes == 0, "\(flag.wrongModes) files were created under the server's umask")
        }
    }
}

/// `mainloop ARGS...` spawned with no signal blocked and default signal
/// actions, as a shell or systemd starts it.
func spawnWithDefaultSignals(_ arguments: [String]) throws -> pid_t {
    try spawnWithDefaultSignals(BuiltTool.path, arguments)
}

/// `EXECUTABLE ARGS...` spawned with no signal blocked, default signal
/// actions, stdout and stderr on /dev/null, and no other descriptor of
/// the test process (so it holds no other test's pipe or socket open).
/// Reap it with `exitStatus(of:)`.
func spawnWithDefaultSignals(_ executable: String, _ arguments: [String]) throws -> pid_t {
    let process = TestProcess()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process.processIdentifier
}

/// Reaps `pid`: its exit code, or 128 + the signal that ended it (as a
/// shell reports it). A child still running after 60 s is killed, reaped,
/// and recorded as a failure.
func exitStatus(of pid: pid_t, sourceLocation: SourceLocation = #_sourceLocation) -> Int32 {
    let (status, inTime) = reap(pid)
    #expect(inTime, "pid \(pid) did not exit within 60 s: killed", sourceLocation: sourceLocation)
    return status
}

/// The bounded waits every test uses for its children (TestSupport's
/// `BoundedWait.swift`): a child that hangs is killed and reported, never
/// waited for forever (one such wait would hang the whole run).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct BoundedWaitTests {
    @Test func aSpawnedChildThatHangsIsKilledAndReported() throws {
        let pid = try spawnWithDefaultSignals("/bin/sleep", ["600"])
        let (status, inTime) = reap(pid, within: 0.3, diagnose: false)
        #expect(!inTime)
        #expect(status == 128 + SIGKILL)
        #expect(kill(pid, 0) != 0, "reaped")
    }

    @Test func aProcessThatHangsIsKilledAndReported() throws {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["600"]
        try process.run()
        #expect(!process.waitForExit(within: 0.3, diagnose: false))
        #expect(process.statusIfEnded == SIGKILL)
    }

    @Test func aChildThatExitsInTimeKeepsItsStatus() throws {
        let (status, inTime) = reap(try spawnWithDefaultSignals("/bin/sh", ["-c", "exit 3"]))
        #expect(inTime && status == 3)
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        #expect(process.waitForExit() && process.statusIfEnded == 0)
    }
}

extension HostileClientTests {
    /// Item 10: a second SIGTERM a few milliseconds after the first used to
    /// end the service with status 143 (its signal sources were removed
    /// while it was still exiting; 11 of 60 tries here). It exits 0 once,
    /// whatever repeats.
    @Test func aRepeatedSigtermStillExitsZero() throws {
        var statuses: [Int32] = []
        for attempt in 0..<40 {
            let directory = TemporaryDirectory()
            let socket = directory.file("s.sock")
            let pid = try spawnWithDefaultSignals(ServiceProcess.runArguments(in: directory))
            #expect(eventually { FileManager.default.fileExists(atPath: socket) })
            kill(pid, SIGTERM)
            usleep(UInt32(attempt % 10) * 1_000)
            kill(pid, SIGTERM)
            usleep(1_000)
            kill(pid, SIGINT)
            statuses.append(exitStatus(of: pid))
        }
        #expect(statuses.allSatisfy { $0 == 0 }, "exit statuses: \(statuses)")
    }

    /// Why `aRepeatedSigtermStillExitsZero` still failed 1 time in 40 under
    /// load (status 143): at exit the runner blocks SIGTERM and SIGINT on
    /// the loop thread while libevent restores their default action, so a
    /// signal that comes then must find no other thread to take it. The two
    /// output pumps' threads took it (they blocked only SIGPIPE). Every
    /// thread the service starts, besides the loop thread, blocks the
    /// signals the loop handles.
    @Test func onlyTheLoopThreadTakesTheSignalsTheServiceHandles() throws {
        let directory = TemporaryDirectory()
        let pid = try spawnWithDefaultSignals(ServiceProcess.runArguments(in: directory))
        defer {
            kill(pid, SIGTERM)
            _ = exitStatus(of: pid)
        }
        #expect(eventually { FileManager.default.fileExists(atPath: directory.file("s.sock")) })
        // The output pumps' threads start in the loop's first turn, after
        // READY=1, so they may not exist yet when the socket appears.
        var threads: [pid_t] = []
        #expect(eventually {
            threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"))?.compactMap { pid_t($0) } ?? []
            return threads.count > 1
        }, "the service runs helper threads (its output pumps)")
        for thread in threads where thread != pid {
            let status = try String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
            let line = status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
            let blocked = try #require(line.flatMap { UInt64($0.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) })
            for signal in [SIGTERM, SIGINT, SIGHUP] {
                #expect(blocked & (1 << UInt64(signal - 1)) != 0, "thread \(thread) does not block signal \(signal): \(line ?? "")")
            }
        }
    }
}

extension HostileClientTests {
    /// Item 4: 64 idle connections used to keep every other client out for
    /// as long as they stayed open. At the limit, the connection idle the
    /// longest (for at least a second) now makes room for the newcomer.
    @Test func idleConnectionsCannotLockOutTheSupervisor() throws {
        let service = try ServiceProcess()
        var idle: [RawClient] = []
        for _ in 0..<80 { idle.append(try RawClient(path: service.socket)) }
        defer { for client in idle { client.close() } }
        let start = Date()
        #expect(service.firstOKReply(within: 5) != nil, "the supervisor got through")
        #expect(Date().timeIntervalSince(start) < 4)
        #expect(service.terminate() == 0)
    }

    /// Item 4: a connection idle past the idle timeout is closed, and one
    /// that starts a request and never finishes it is closed as well.
    @Test func idleAndStalledConnectionsAreClosed() throws {
        let directory = TemporaryDirectory()
        let loop = try MainRunLoop(deterministic: true)
        let server = try ControlServer(loop: loop, path: directory.file("c.sock"), idleTimeout: .seconds(10),
                                       logger: Logger(label: "test")) { _ in ["ok": true] }
        let quiet = try RawClient(path: server.path), stalled = try RawClient(path: server.path)
        try loop.runUntilIdle()
        #expect(server.connectionCount == 2)
        stalled.sendWithoutBlocking(Array(#"{"query":"sta"#.utf8))  // never finished
        try loop.advance(by: .seconds(9))
        #expect(server.connectionCount == 2)
        try loop.advance(by: .seconds(2))
        #expect(server.connectionCount == 0)
        var byte: UInt8 = 0
        #expect(recv(quiet.fd, &byte, 1, 0) >= 0, "closed by the service (an error line or EOF)")
        quiet.close()
        stalled.close()
        server.stop()
    }
}

extension HostileClientTests {
    /// CPU time (user + system) of process `pid`, in clock ticks.
    static func cpuTicks(of pid: Int32) -> Int {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let end = stat.lastIndex(of: ")") else { return -1 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        // After "pid (comm)": state is field 0, utime field 11, stime field 12.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return -1 }
        return user + system
    }

    /// Item 7: when `accept` fails with EMFILE the listening socket stays
    /// readable; the old service spun at 100 % CPU and logged a line per
    /// try. Now it stops accepting for a moment (backing off) and logs at
    /// most a few lines, and it accepts again once descriptors are free.
    @Test func runningOutOfDescriptorsNeitherSpinsNorFloodsTheLog() throws {
        let directory = TemporaryDirectory()
        let log = directory.file("log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let service = try ServiceProcess(directory: directory, prefix: ["/bin/bash", "-c", #"ulimit -n 48 && exec "$0" "$@""#],
                                         standardError: FileHandle(forWritingAtPath: log) as Any)
        let socket = service.socket
        var clients: [RawClient] = []
        let connectStart = Date()
        for _ in 0..<60 { if let client = try? RawClient(path: socket) { clients.append(client) } }
        let connectSeconds = Date().timeIntervalSince(connectStart)
        usleep(200_000)
        let pid = service.process.processIdentifier
        let before = Self.cpuTicks(of: pid)
        usleep(1_500_000)
        let spent = Self.cpuTicks(of: pid) - before
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
        #expect(spent < 30, "\(spent) ticks of CPU in 1.5 s with descriptors exhausted")
        #expect(lines < 40, "\(lines) log lines")
        for client in clients { client.close() }
        // A bound on a wait for the condition, not a sleep: the reply comes
        // as soon as the service accepts again. 5 s was once too short in
        // CI's whole-suite pass (every suite at once on 2 loaded cores, the
        // accept backed off for up to 2 s, 60 closed clients in the backlog
        // to go through first).
        let replyStart = Date()
        let reply = service.firstOKReply(within: 30)
        // What a failure needs to be understood: where the time went, and
        // the service's log.
        #expect(reply != nil, """
            accepting again once descriptors are free (60 connects took \(connectSeconds) s, \
            the wait \(Date().timeIntervalSince(replyStart)) s); the service's log: \
            \((try? String(contentsOfFile: log, encoding: .utf8)).map { String($0.suffix(2_000)) } ?? "unreadable")
            """)
        #expect(service.terminate() == 0)
    }
}

extension HostileClientTests {
    /// Item 7: one log line per malformed request flooded the log. Each
    /// still gets its error reply and is counted; the log gets a few lines
    /// per 10 s, then says how many it left out.
    @Test func malformedRequestsDoNotFloodTheLog() throws {
        let directory = TemporaryDirectory()
        let log = directory.file("log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let service = try ServiceProcess(directory: directory, standardError: FileHandle(forWritingAtPath: log) as Any)
        let socket = service.socket
        let garbage = Array(String(repeating: "not json\n", count: 2_000).utf8)
        let client = try RawClient(path: socket)
        var replies: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 65_536), offset = 0
        while offset < garbage.count {  // write and read in turn: replies are larger than requests
            offset += client.sendWithoutBlocking(Array(garbage[offset...]))
            let count = recv(client.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { replies += buffer[0..<count] }
        }
        shutdown(client.fd, Int32(SHUT_WR))
        while true {
            let count = recv(client.fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            replies += buffer[0..<count]
        }
        client.close()
        #expect(replies.filter { $0 == UInt8(ascii: "\n") }.count == 2_000, "every malformed line got its error reply")
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(lines.filter { $0.contains("malformed request") }.count <= 5, "\(lines.count) log lines")
        _ = service.terminate()
    }
}

extension HostileClientTests {
    /// Item 11: inputs answered `ok` while system events kept the loop busy
    /// vanished at SIGTERM with no record. Every acknowledged input is
    /// delivered (an `input` observation) or reported (`discarded`). The
    /// old service did not even answer them: the flooding client kept the
    /// loop in its read callback (now bounded per turn).
    @Test func everyAcknowledgedInputIsReportedAtShutdown() throws {
        let directory = TemporaryDirectory()
        let output = directory.file("out.jsonl")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let service = try ServiceProcess(directory: directory, standardOutput: FileHandle(forWritingAtPath: output) as Any)
        let socket = service.socket
        let stop = Locked(false)
        let flooder = Thread {
            guard let client = try? RawClient(path: socket) else { return }
            let events = Array((#"{"system":{"orientation":"faceUp"}}"# + "\n" + #"{"system":{"orientation":"portrait"}}"# + "\n").utf8)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !stop.value {
                client.sendWithoutBlocking(events)
                _ = recv(client.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            }
            client.close()
        }
        flooder.start()
        var acknowledged: [String] = []
        for index in 0..<30 {
            let id = "tap-\(index)"
            if (try? ControlClient.send(["input": .string(id)], to: socket))?["ok"] == .bool(true) { acknowledged.append(id) }
        }
        let status = service.terminate()
        stop.mutate { $0 = true }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let records = text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)).objectValue }
        var reported = Set<String>()
        for record in records {
            if let id = record["input"]?.stringValue { reported.insert(id) }
            if let id = record["discarded"]?.objectValue?["input"]?.stringValue { reported.insert(id) }
        }
        let missing = acknowledged.filter { !reported.contains($0) }
        #expect(!acknowledged.isEmpty)
        #expect(missing.isEmpty, "\(missing.count) of \(acknowledged.count) acknowledged inputs have no record: \(missing.prefix(5))")
        #expect(status == 0)
    }
}

/// Item 8: the default socket path, and who `ctl` agrees to talk to.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SocketSquattingTests {
    /// Without `XDG_RUNTIME_DIR` the default socket was `/tmp/mainloop-UID.sock`,
    /// which another user could bind first. Now it is in a directory of the
    /// user's own, mode 0700, verified before use.
    @Test func theDefaultSocketLivesInAPrivateDirectory() throws {
        let directory = TemporaryDirectory()
        let environment = ["XDG_RUNTIME_DIR": "", "TMPDIR": directory.path]
        let privateDirectory = directory.file("mainloop-\(getuid())")
        let service = TestProcess()
        service.executableURL = URL(fileURLWithPath: BuiltTool.path)
        service.arguments = ["run", "--defaults-file", directory.file("d.json"),
                             "--locale-file", directory.file("locale"), "--zone-file", directory.file("localtime")]
        service.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        service.standardOutput = FileHandle.nullDevice
        service.standardError = FileHandle.nullDevice
        try service.run()
        defer { if service.isRunning { service.terminate() } }
        let socket = privateDirectory + "/mainloop.sock"
        #expect(eventually { FileManager.default.fileExists(atPath: socket) }, "the socket is \(socket)")
        var status = stat()
        #expect(lstat(privateDirectory, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
        #expect(status.st_mode & 0o777 == 0o700 && status.st_uid == getuid())
        let ctl = try BuiltTool.run(["ctl", "state"], environment: environment)
        #expect(ctl.status == 0, "\(ctl)")
        service.terminate()
        #expect(service.waitForExit(), "the service did not exit within 60 s of SIGTERM")
    }

    /// A directory at the default place that is not private (or a symlink)
    /// is refused, by the service and by `ctl`.
    @Test(arguments: ["open", "symlink"])
    func aDefaultDirectoryThatIsNotPrivateIsRefused(kind: String) throws {
        let directory = TemporaryDirectory()
        let privateDirectory = directory.file("mainloop-\(getuid())")
        if kind == "open" {
            mkdir(privateDirectory, 0o777)
            chmod(privateDirectory, 0o777)
        } else {
            mkdir(directory.file("elsewhere"), 0o700)
            symlink(directory.file("elsewhere"), privateDirectory)
        }
        let environment = ["XDG_RUNTIME_DIR": "", "TMPDIR": directory.path]
        let run = try BuiltTool.run(["run", "--defaults-file", directory.file("d.json"), "--locale-file", directory.file("l"),
                                     "--zone-file", directory.file("z")],
                                    environment: environment, prefix: ["/usr/bin/timeout", "5"])
        #expect(run.status != 0 && run.status != 124, "\(run)")
        #expect(run.error.contains("refusing to use \(privateDirectory)"), "\(run.error)")
        let ctl = try BuiltTool.run(["ctl", "state"], environment: environment)
        #expect(ctl.status != 0)
        #expect(ctl.error.contains("refusing to use \(privateDirectory)"), "\(ctl.error)")
    }

    /// `ctl` never checked who the server was: it talked to a squatter.
    /// Now it checks the server's uid with SO_PEERCRED (its own, or root).
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv to run a server as another user"))
    func ctlRefusesAServerRunByAnotherUser() throws {
        let directory = TemporaryDirectory()
        chmod(directory.path, 0o777)
        let socket = directory.file("s.sock")
        let squatter = TestProcess()
        squatter.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        squatter.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", BuiltTool.path,
                              "run", "--socket", socket, "--defaults-file", directory.file("d.json"),
                              "--locale-file", directory.file("l"), "--zone-file", directory.file("z")]
        squatter.standardOutput = FileHandle.nullDevice
        squatter.standardError = FileHandle.nullDevice
        try squatter.run()
        defer { if squatter.isRunning { squatter.terminate() } }
        #expect(eventually { FileManager.default.fileExists(atPath: socket) })
        chmod(socket, 0o666)
        let ctl = try BuiltTool.run(["ctl", "--socket", socket, "state"])
        #expect(ctl.status != 0, "\(ctl)")
        #expect(ctl.error.contains("served by uid 65534"), "\(ctl.error)")
        squatter.terminate()
        #expect(squatter.waitForExit(), "the squatter did not exit within 60 s of SIGTERM")
    }
}

extension HostileClientTests {
    /// Item 5: observations were written with a blocking `write()` on the
    /// loop thread; when nobody read stdout, the socket stopped answering
    /// and SIGTERM was not handled. Now output goes through a bounded
    /// buffer drained by a writer thread: the loop never waits for it.
    @Test func anUnreadStdoutNeitherFreezesTheLoopNorDelaysSigterm() throws {
        let unread = Pipe()  // never read
        let service = try ServiceProcess(extraArguments: ["--output-buffer-bytes", "65536"], standardOutput: unread)
        let socket = service.socket
        let client = try RawClient(path: socket)
        let events = Array(String(repeating: #"{"system":{"orientation":"faceUp"}}"# + "\n" + #"{"system":{"orientation":"portrait"}}"# + "\n",
                                  count: 200).utf8)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let flood = Date()
        while Date().timeIntervalSince(flood) < 1 {  // far more than a pipe holds
            client.sendWithoutBlocking(events)
            _ = recv(client.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        }
        client.close()
        let asked = Date()
        let stats = try ControlClient.send(["query": "stats"], to: socket)
        #expect(stats["ok"] == .bool(true))
        #expect(Date().timeIntervalSince(asked) < 2, "answered while stdout is full")
        #expect((stats["outputDroppedLines"]?.numberValue ?? 0) > 0, "what overflowed is counted: \(stats)")
        let terminated = Date()
        let status = service.terminate()
        #expect(Date().timeIntervalSince(terminated) < 2.5, "SIGTERM honoured within about a second")
        #expect(status == 0)
        _ = unread  // kept open, unread, until the end
    }
}

extension HostileClientTests {
    /// Item 3: distinct subjects, long ids and big values while suspended
    /// used to grow the service without bound (10^6 accessory ids: 253 MB, a
    /// resume that blocked the loop for 8.7 s, an 18 MB `values` reply).
    /// The limits are configurable; what is over them is refused with a
    /// clear error and counted; a resume at the limit is quick.
    @Test func subjectsIdsValuesAndRepliesAreBounded() throws {
        let service = try ServiceProcess(extraArguments: ["--max-subjects", "300", "--max-subject-bytes", "64",
                                                          "--max-value-bytes", "1024", "--max-reply-bytes", "4000"])
        let socket = service.socket
        _ = try ControlClient.send(["lifecycle": "home"], to: socket)
        var accepted = 0, refusals: [String] = []
        for index in 0..<350 {
            let reply = try ControlClient.send(["system": ["accessory": ["id": .string("dock-\(index)"), "connected": true]]],
                                               to: socket)
            if reply["ok"] == .bool(true) { accepted += 1 } else { refusals.append(reply["error"]?.stringValue ?? "") }
        }
        #expect(accepted == 300)
        #expect(refusals.count == 50 && refusals.allSatisfy { $0.contains("300") }, "\(refusals.first ?? "")")
        let longID = String(repeating: "x", count: 65)
        let long = try ControlClient.send(["system": ["accessory": ["id": .string(longID), "connected": true]]], to: socket)
        #expect(long["ok"] == .bool(false) && (long["error"]?.stringValue?.contains("64") ?? false), "\(long)")
        let stats = try ControlClient.send(["query": "stats"], to: socket)
        #expect(stats["kinds"]?.objectValue?["accessory"]?.objectValue?["refused"] == .number(51), "\(stats)")
        let start = Date()
        #expect(try ControlClient.send(["lifecycle": "foreground"], to: socket)["ok"] == .bool(true))
        #expect(Date().timeIntervalSince(start) < 1, "a resume at the limit is quick")
        let values = try ControlClient.send(["query": "values"], to: socket)  // 300 accessories now: about 5 KB
        #expect(values["ok"] == .bool(false) && (values["error"]?.stringValue?.contains("over the limit of 4000") ?? false),
                "a reply over the limit is refused: \(values)")
        _ = service.terminate()
    }
}

extension HostileClientTests {
    /// Item 1, deterministically: the client's unread replies have backed
    /// the connection up (it waits to write), then the client sends one more
    /// request and closes before the loop runs again, so one callback gets
    /// read and write readiness at once. The old connection closed itself
    /// while reading (the reply found the client gone) and then flushed
    /// through an `unowned` reference to the freed object: SIGABRT. In a
    /// child process, so the crash fails the test instead of the run.
    @Test func readAndWriteReadinessAfterACloseInTheSameCallbackIsSafe() async {
        await #expect(processExitsWith: .success) {
            alarm(20)
            let directory = TemporaryDirectory()
            let loop = try MainRunLoop(deterministic: true)
            let big = JSONObject([("ok", .bool(true)), ("padding", .string(String(repeating: "x", count: 2_000)))])
            let server = try ControlServer(loop: loop, path: directory.file("c.sock"), logger: Logger(label: "test")) { _ in big }
            let client = try RawClient(path: server.path)
            try loop.runUntilIdle()  // accepted
            let request = Array((#"{"query":"state"}"# + "\n").utf8)
            for _ in 0..<200 { client.sendWithoutBlocking(request) }  // ~400 KB of replies: far more than the buffer
            try loop.runUntilIdle()
            client.sendWithoutBlocking(request)
            client.close()
            try loop.runUntilIdle()  // the callback with both readinesses
            precondition(server.connectionCount == 0)
            server.stop()
        }
    }
}
