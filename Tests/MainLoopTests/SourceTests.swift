import Glibc
import MainLoop
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct FileDescriptorSourceTests {
    @Test func readReadinessOnARealPipe() throws {
        let loop = try MainRunLoop()
        let pipe = TestPipe()
        var events: [Readiness] = []
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { ready in
            events.append(ready)
            pipe.drain()
            loop.stop()
        }
        let writer = TestThread { usleep(5_000); pipe.writeByte() }
        try loop.run()
        writer.join()
        #expect(events == [.read])
        try source.remove()
    }

    @Test func interestChangesWhileRunningAndRemoveFromTheHandler() throws {
        let loop = try MainRunLoop()
        let pipe = TestPipe()
        var log: [String] = []
        var source: FileDescriptorSource!
        source = try loop.addFileDescriptor(pipe.writeEnd, interest: .write) { ready in
            log.append("writable")
            // Switch to nothing (parked), then remove from inside the handler.
            try? source.update(interest: [])
            try? source.remove()
            try? loop.executeInLoop { loop.stop() }
        }
        try loop.run()
        #expect(log == ["writable"])
        #expect(source.isRemoved)
        #expect(throws: MainLoopError.sourceRemoved) { try source.update(interest: .read) }
        #expect(throws: MainLoopError.sourceRemoved) { try source.remove() }
    }

    /// `.peerClosed` comes with `.read` once the socket's peer shuts down
    /// its sending side, with its data still unread; data alone does not
    /// bring it, nor does a shutdown to a source that does not ask for it.
    @Test(arguments: [true, false])
    func peerClosedIsReportedWhenThePeerShutsDown(asked: Bool) throws {
        let loop = try MainRunLoop()
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        var reports: [Readiness] = []
        var source: FileDescriptorSource!
        source = try loop.addFileDescriptor(ends[0], interest: asked ? [.read, .peerClosed] : .read) { ready in
            reports.append(ready)
            // Level-triggered: a shut-down peer stays readable, so stop
            // watching once it has been seen (nothing is read, so the data
            // is still unread when the shutdown is reported).
            if reports.count == 2 { try? source.update(interest: []) }
        }
        var byte: UInt8 = 1
        #expect(send(ends[1], &byte, 1, 0) == 1)
        try loop.runOnce()
        #expect(reports == [.read])
        #expect(shutdown(ends[1], Int32(SHUT_WR)) == 0)
        try loop.runUntilIdle()
        #expect(reports == [.read, asked ? [.read, .peerClosed] : .read])
    }

    /// A pipe has no shutdown to report: its writer's close is end of file,
    /// `.read` alone.
    @Test func aPipeNeverReportsPeerClosed() throws {
        let loop = try MainRunLoop(deterministic: true)
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        var reports: [Readiness] = []
        var source: FileDescriptorSource!
        source = try loop.addFileDescriptor(ends[0], interest: [.read, .peerClosed]) { ready in
            reports.append(ready)
            try? source.update(interest: [])
        }
        close(ends[1])
        try loop.runUntilIdle()
        #expect(reports == [.read])
    }

    @Test func parkedSourceDeliversNothingUntilResumed() throws {
        let loop = try MainRunLoop(deterministic: true)
        let pipe = TestPipe()
        var reads = 0
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: []) { _ in reads += 1; pipe.drain() }
        pipe.writeByte()
        try loop.runUntilIdle()
        #expect(reads == 0)
        try source.update(interest: .read)
        try loop.runUntilIdle()
        #expect(reads == 1)
    }
}

/// Signals are process-wide and only one libevent base may own them, so
/// these tests run one at a time. Each signal is sent to the loop's own
/// thread: sent to the process while a handler is installed, it may land on
/// another test's thread and end a system call there with EINTR (it did,
/// in Swift Testing's wait for an exit test). A signal sent to a thread
/// goes through the same handler and socketpair as one sent with `kill`.
@Suite(.ownThread, .serialized, .timeLimit(.minutes(2))) struct SignalSourceTests {
    @Test(arguments: [SIGUSR1, SIGUSR2, SIGHUP, SIGTERM, SIGINT])
    func realSignalIsDeliveredOnTheLoopThread(signalNumber: Int32) throws {
        let loop = try MainRunLoop()
        var deliveredOnLoop: [Bool] = []
        let source = try loop.addSignal(signalNumber) {
            deliveredOnLoop.append(loop.inLoop)
            loop.stop()
        }
        try loop.executeInLoop { pthread_kill(pthread_self(), signalNumber) }
        try loop.run()
        #expect(deliveredOnLoop == [true])
        try source.remove()
        #expect(throws: MainLoopError.sourceRemoved) { try source.remove() }
        try loop.shutdown()
    }

    /// Past its burst a signal source is paused; signals that come while
    /// it is paused are delivered once when its window ends. SIGURG, whose
    /// default action is to ignore it: under ThreadSanitizer a signal sent
    /// to the process is delivered later, and one still on its way when the
    /// source is removed must not end the test process.
    @Test func aRateLimitedSignalIsDeliveredOnceAfterThePause() throws {
        let loop = try MainRunLoop(deterministic: true)
        var deliveries = 0
        let source = try loop.addSignal(SIGURG) { deliveries += 1 }
        try source.setRateLimit(RateLimit(interval: .seconds(1), burst: 1))
        func signalAndWait(until condition: () -> Bool) throws {
            pthread_kill(pthread_self(), SIGURG)
            // libevent forwards the signal through a socketpair: wait for it.
            for _ in 0..<10_000 where !condition() {
                try loop.runUntilIdle()
                if !condition() { usleep(100) }
            }
        }
        try signalAndWait { deliveries == 1 }
        try signalAndWait { source.isPaused }
        #expect(deliveries == 1 && source.isPaused)
        pthread_kill(pthread_self(), SIGURG)
        try loop.runUntilIdle()
        try loop.advance(by: .seconds(1))
        #expect(deliveries == 2, "the signals that came while paused, once")
        try source.remove()
        try loop.shutdown()
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct SelfRemovalTests {
    /// A source whose handler removes it, with the loop's registry as its only
    /// owner, stays alive until its callback returns (the janitor frees it
    /// later): its handler's captured state is still valid after `remove()`.
    @Test func aSourceRemovedByItsOwnHandlerOutlivesTheCallback() throws {
        let loop = try MainRunLoop()
        let pipe = TestPipe()
        final class Box { weak var source: FileDescriptorSource? }
        let box = Box()
        let log = Recorder()
        let captured = Array(repeating: "after", count: 64)  // touched after remove()
        box.source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            pipe.drain()
            try? box.source?.remove()
            log(captured.joined().count == 320 ? "intact" : "corrupt")
        }
        #expect(box.source != nil, "the registry owns the source")
        pipe.writeByte()
        try loop.runOnce()
        try loop.runUntilIdle()  // the janitor runs
        #expect(log.entries == ["intact"])
        #expect(box.source == nil, "freed once the callback was over")
    }
}
