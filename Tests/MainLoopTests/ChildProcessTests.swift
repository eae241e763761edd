import Glibc
import MainLoop
import Testing
import TestSupport

/// Child processes watched through pidfds: each end reported once, with
/// its status, without touching anyone else's children.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ChildProcessTests {
    /// Where long-running children write: not the test runner's output
    /// pipe, which a child left behind by a failed test would hold open.
    static let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)

    /// Runs `loop` until `done` says so (each runOnce waits for something).
    private func run(_ loop: MainRunLoop, until done: () -> Bool) throws {
        while !done() { try loop.runOnce() }
    }

    @Test(arguments: [("exit 0", ChildProcessTermination.exited(code: 0)),
                      ("exit 3", .exited(code: 3)),
                      ("kill -KILL $$", .killed(signal: SIGKILL, coreDumped: false)),
                      ("kill -TERM $$", .killed(signal: SIGTERM, coreDumped: false))])
    func reportsHowTheChildEnded(script: String, expected: ChildProcessTermination) throws {
        let loop = try MainRunLoop()
        var ends: [ChildProcessTermination] = []
        let source = try loop.spawnChildProcess(executable: "/bin/sh", arguments: ["-c", script]) { ends.append($0) }
        try run(loop) { !ends.isEmpty }
        try loop.runUntilIdle()
        #expect(ends == [expected])
        #expect(source.termination == expected && source.isRemoved)
        // Reaped: the pid is no longer this process's child.
        #expect(waitpid(source.pid, nil, WNOHANG) == -1 && errno == ECHILD)
    }

    /// Arguments, environment, working directory and standard output reach
    /// the child; the name is looked up in PATH.
    @Test func spawnPassesEverythingToTheChild() throws {
        let loop = try MainRunLoop()
        let output = TestPipe()
        var end: ChildProcessTermination?
        _ = try loop.spawnChildProcess(executable: "sh", arguments: ["-c", "printf '%s|%s|%s' \"$1\" \"$GREETING\" \"$PWD\"", "sh", "one two"],
                                       environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"],
                                       workingDirectory: "/tmp", standardOutput: output.writeEnd) { end = $0 }
        try run(loop) { end != nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(output.readEnd, &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self) == "one two|hello|/tmp")
        #expect(end == .exited(code: 0))
    }

    /// The child starts with no signal blocked, whatever the spawning
    /// thread blocks (a service blocks SIGTERM on its threads).
    @Test func theChildDoesNotInheritBlockedSignals() throws {
        let loop = try MainRunLoop()
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var end: ChildProcessTermination?
        let source = try loop.spawnChildProcess(executable: "/bin/sleep", arguments: ["30"], standardOutput: Self.devNull, standardError: Self.devNull) { end = $0 }
        #expect(kill(source.pid, SIGTERM) == 0)
        try run(loop) { end != nil }
        #expect(end == .killed(signal: SIGTERM, coreDumped: false))
    }

    /// Removing the source stops watching without reaping: the child is
    /// still this process's to wait for.
    @Test func removingStopsWatchingWithoutReaping() throws {
        let loop = try MainRunLoop()
        var called = false
        let source = try loop.spawnChildProcess(executable: "/bin/sleep", arguments: ["30"], standardOutput: Self.devNull, standardError: Self.devNull) { _ in called = true }
        try source.remove()
        #expect(throws: MainLoopError.sourceRemoved) { try source.remove() }
        #expect(kill(source.pid, SIGKILL) == 0)
        var status: Int32 = 0
        #expect(waitpid(source.pid, &status, 0) == source.pid)
        #expect(status & 0x7f == SIGKILL)
        try loop.runUntilIdle()
        #expect(!called)
    }

    /// A child the loop does not watch is left to whoever waits for it.
    @Test func otherChildrenAreLeftToTheirOwners() throws {
        let loop = try MainRunLoop()
        var watchedEnd: ChildProcessTermination?
        _ = try loop.spawnChildProcess(executable: "/bin/sh", arguments: ["-c", "exit 7"]) { watchedEnd = $0 }
        var other: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup("exit 9"), nil]
        defer { argv.forEach { free($0) } }
        #expect(posix_spawn(&other, "/bin/sh", nil, nil, argv, environ) == 0)
        try run(loop) { watchedEnd != nil }
        var status: Int32 = 0
        #expect(waitpid(other, &status, 0) == other)
        #expect((status >> 8) & 0xff == 9)
        #expect(watchedEnd == .exited(code: 7))
    }

    @Test func refusesWhatItCannotWatch() throws {
        let loop = try MainRunLoop()
        #expect(throws: MainLoopError.notChildProcess(pid: 1)) { try loop.addChildProcess(pid: 1) { _ in } }
        #expect(throws: MainLoopError.notChildProcess(pid: getpid())) { try loop.addChildProcess(pid: getpid()) { _ in } }
        #expect(throws: MainLoopError.invalidArgument("a child process id must be positive, not 0")) {
            try loop.addChildProcess(pid: 0) { _ in }
        }
        #expect(throws: MainLoopError.system(operation: "posix_spawn /nonexistent/helper", errno: ENOENT)) {
            try loop.spawnChildProcess(executable: "/nonexistent/helper") { _ in }
        }
        #expect(throws: MainLoopError.system(operation: "posix_spawn /bin/true", errno: ENOENT)) {
            try loop.spawnChildProcess(executable: "/bin/true", workingDirectory: "/nonexistent") { _ in }
        }
        // Already reaped: nothing left to learn.
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { argv.forEach { free($0) } }
        #expect(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
        #expect(waitpid(pid, nil, 0) == pid)
        #expect(throws: MainLoopError.notChildProcess(pid: pid)) { try loop.addChildProcess(pid: pid) { _ in } }
    }

    /// A child that never exits does not hold `run()` after `stop()`; an
    /// exit handler is where a service stops its children.
    @Test func aRunningChildDoesNotHoldRunAfterStop() throws {
        let loop = try MainRunLoop()
        var end: ChildProcessTermination?
        let child = try loop.spawnChildProcess(executable: "/bin/sleep", arguments: ["60"], standardOutput: Self.devNull, standardError: Self.devNull) { end = $0 }
        try loop.addExitHandler { kill(child.pid, SIGTERM) }
        try loop.executeInLoop { loop.stop() }
        try loop.run()
        // run() returned with the child still running at stop(); its end,
        // from the exit handler's SIGTERM, may be seen before run() returns
        // or on the next run, never lost.
        try run(loop) { end != nil }
        #expect(end == .killed(signal: SIGTERM, coreDumped: false))
    }

    /// A child that ended before it was added is reported at once.
    @Test func aChildThatAlreadyEndedIsReported() throws {
        let loop = try MainRunLoop()
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup("exit 4"), nil]
        defer { argv.forEach { free($0) } }
        #expect(posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0)
        var info = siginfo_t()
        #expect(waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0)
        var end: ChildProcessTermination?
        _ = try loop.addChildProcess(pid: pid) { end = $0 }
        try run(loop) { end != nil }
        #expect(end == .exited(code: 4))
    }
}

extension ChildProcessTests {
    /// The child gets its standard streams and nothing else: a pipe's
    /// write end open here (not close-on-exec) is closed in the child, so
    /// the child's reader sees end of file when this side closes.
    @Test func theChildInheritsOnlyItsStandardStreams() throws {
        let loop = try MainRunLoop()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        var end: ChildProcessTermination?
        _ = try loop.spawnChildProcess(executable: "/bin/sh", arguments: ["-c", "read line; [ ! -e /proc/self/fd/\(fds[1]) ]"],
                                       standardInput: fds[0]) { end = $0 }
        close(fds[1])
        while end == nil { try loop.runOnce() }
        #expect(end == .exited(code: 0))
    }
}
