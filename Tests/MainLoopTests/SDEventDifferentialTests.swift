import CLinux
import Glibc
import MainLoop
import SDEventPeer
import Testing
import TestSupport

/// The same sequences on the real sd-event (libsystemd, through the
/// `SDEventPeer` C target) and on MainLoop: the order of idle work, exit
/// work and rate-limited dispatches, and a child's status, must agree.
/// MainLoop's three priorities stand for sd-event's IMPORTANT, between, and
/// NORMAL; idle work for a defer source at SD_EVENT_PRIORITY_IDLE.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SDEventDifferentialTests {
    private func peerLog(_ run: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws -> [String] {
        var buffer = [CChar](repeating: 0, count: 512)
        let result = buffer.withUnsafeMutableBufferPointer { run($0.baseAddress!, $0.count) }
        try #require(result == 0, "sd-event: \(String(cString: strerror(-result)))")
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .split(separator: ",").map(String.init)
    }

    @Test func idleWorkRunsInSDEventsOrder() throws {
        let expected = try peerLog { sd_event_peer_idle_order($0, $1) }
        let log = try PassHooksTests.runIdleOrderSequence(on: MainRunLoop(deterministic: true))
        #expect(log.entries == expected)
        #expect(expected == ["system", "app", "idle 1", "posted by idle 1", "idle 2"])
    }

    @Test func exitHandlersRunInSDEventsOrder() throws {
        let expected = try peerLog { sd_event_peer_exit_order($0, $1) }
        let loop = try MainRunLoop()
        let log = Recorder()
        try loop.addExitHandler(priority: .app) { log("app") }
        try loop.addExitHandler(priority: .system) { log("system") }
        try loop.addExitHandler(priority: .input) { log("input") }
        try loop.executeInLoop { loop.stop() }
        try loop.run()
        #expect(log.entries == expected)
        #expect(expected == ["system", "input", "app"])
    }

    /// A descriptor that stays readable, 3 dispatches per 150 ms window:
    /// which dispatches came after a pause, on each loop.
    @Test func rateLimitWindowsMatchSDEvent() throws {
        let interval: UInt64 = 150_000, burst: UInt32 = 3, dispatches = 7
        let pipe = TestPipe()
        pipe.writeByte()
        var peerTimes = [UInt64](repeating: 0, count: dispatches)
        let result = sd_event_peer_rate_limited_io(pipe.readEnd, interval, burst, UInt32(dispatches), &peerTimes)
        try #require(result == 0, "sd-event: \(String(cString: strerror(-result)))")

        let loop = try MainRunLoop()
        var times: [UInt64] = []
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            times.append(UInt64(loop.now.nanoseconds / 1000))
            if times.count == dispatches { loop.stop() }
        }
        try source.setRateLimit(RateLimit(interval: .microseconds(Int64(interval)), burst: Int(burst)))
        try loop.run()
        try source.remove()

        /// The indexes of dispatches that came at least a window after the
        /// first of their burst: where the pauses ended.
        func resumes(_ times: [UInt64]) -> [Int] {
            var windowStart = times[0], result: [Int] = []
            for (index, time) in times.enumerated().dropFirst() where time - windowStart >= interval {
                result.append(index)
                windowStart = time
            }
            return result
        }
        #expect(resumes(times) == resumes(peerTimes))
        #expect(resumes(times) == [3, 6])
        // Never early: a resume is at or after its window's end.
        #expect(times[3] - times[0] >= interval && times[6] - times[3] >= interval)
    }

    @Test(arguments: ["exit 0", "exit 42", "kill -KILL $$", "kill -HUP $$"])
    func aChildsEndAgreesWithSDEvent(script: String) throws {
        func spawn() throws -> pid_t {
            var pid: pid_t = 0
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(script), nil]
            defer { argv.forEach { free($0) } }
            try #require(posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0)
            return pid
        }
        let peerChild = try spawn()
        let pidfd = CLinux_pidfd_open(peerChild)
        try #require(pidfd >= 0)
        defer { close(pidfd) }
        var code: Int32 = 0, status: Int32 = 0
        let result = sd_event_peer_child(pidfd, &code, &status)
        try #require(result == 0, "sd-event: \(String(cString: strerror(-result)))")
        let peer: ChildProcessTermination = code == CLinux_child_exited ? .exited(code: status)
            : .killed(signal: status, coreDumped: code == CLinux_child_dumped)

        let loop = try MainRunLoop()
        var end: ChildProcessTermination?
        _ = try loop.addChildProcess(pid: try spawn()) { end = $0 }
        while end == nil { try loop.runOnce() }
        #expect(end == peer)
    }
}
