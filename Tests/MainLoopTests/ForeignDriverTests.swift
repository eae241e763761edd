import Glibc
import MainLoop
import SDEventPeer
import Testing
import TestSupport

/// A loop driven from outside with `poll` on its backend descriptor, as a
/// GLib, sd-event or hand-written loop drives it.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ForeignDriverTests {
    /// Waits in `poll` on the backend descriptor for at most the loop's
    /// next deadline, then dispatches; until `done` or 2,000 rounds.
    private func drive(_ loop: MainRunLoop, until done: () -> Bool) throws {
        var descriptor = pollfd(fd: try loop.backendFileDescriptor(), events: Int16(POLLIN), revents: 0)
        var rounds = 0
        while !done(), rounds < 2_000 {
            rounds += 1
            var timeout: Int32 = 1_000
            if let deadline = loop.nextDeadline {
                let remaining = deadline - loop.now
                timeout = remaining > .zero ? Int32(remaining / .milliseconds(1)) + 1 : 0
            }
            _ = poll(&descriptor, 1, timeout)
            try loop.dispatchReady()
        }
    }

    /// The descriptor is the loop's epoll instance: it watches the loop's
    /// own descriptors, and two loops have two.
    @Test func theBackendDescriptorIsTheLoopsEpollInstance() throws {
        let first = try MainRunLoop(), second = try MainRunLoop()
        let descriptor = try first.backendFileDescriptor()
        #expect(try first.backendFileDescriptor() == descriptor)
        #expect(try second.backendFileDescriptor() != descriptor)
        var target = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/self/fd/\(descriptor)", &target, 63)
        #expect(String(decoding: target.prefix(max(length, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    == "anon_inode:[eventpoll]")
        try first.shutdown()
        #expect(throws: MainLoopError.shutDown) { try first.backendFileDescriptor() }
    }

    /// A post from another thread makes the descriptor readable; the
    /// dispatch runs it.
    @Test func aPostFromAnotherThreadWakesThePoll() throws {
        let loop = try MainRunLoop()
        let ran = LockedValue(false)
        let poster = TestThread {
            usleep(2_000)
            try! loop.execute { ran.withLock { $0 = true } }
        }
        try drive(loop) { ran.withLock { $0 } }
        poster.join()
        #expect(ran.withLock { $0 })
    }

    /// A per-callback loop (a recorded session's) driven from outside runs
    /// its descriptors, other threads' posts, its own work and its timers
    /// too: what comes from outside runs below everything, a pass later.
    @Test func aPerCallbackLoopRunsEverythingWhenDriven() throws {
        let loop = try MainRunLoop(clockReading: .perCallback)
        let pipe = TestPipe()
        var seen: [String] = []
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            pipe.drain()
            seen.append("fd")
            try! loop.executeInLoop { seen.append("posted by fd") }
        }
        loop.scheduleTimer(after: .milliseconds(5)) { seen.append("timer") }
        let remoteRan = LockedValue(false)
        let poster = TestThread {
            pipe.writeByte()
            try! loop.execute { remoteRan.withLock { $0 = true } }
        }
        try drive(loop) {
            if remoteRan.withLock({ $0 }), !seen.contains("from another thread") { seen.append("from another thread") }
            return seen.count == 4
        }
        poster.join()
        try source.remove()
        #expect(Set(seen) == ["fd", "posted by fd", "timer", "from another thread"], "\(seen)")
        #expect(seen.firstIndex(of: "fd")! < seen.firstIndex(of: "posted by fd")!)
    }

    /// A timer wakes the poll through the loop's timerfd, never early.
    @Test func aTimerFiresThroughTheDescriptorNeverEarly() throws {
        let loop = try MainRunLoop()
        let start = loop.now
        var firedAt: LoopInstant?
        loop.scheduleTimer(after: .milliseconds(20)) { firedAt = loop.now }
        #expect(loop.nextDeadline != nil)
        // The descriptor alone: every poll waits without a timeout.
        var descriptor = pollfd(fd: try loop.backendFileDescriptor(), events: Int16(POLLIN), revents: 0)
        try loop.dispatchReady()  // arms the timerfd
        while firedAt == nil {
            #expect(poll(&descriptor, 1, 5_000) == 1)
            try loop.dispatchReady()
        }
        #expect(try #require(firedAt) - start >= .milliseconds(20))
    }

    /// Work posted on the loop thread is not behind the descriptor: the
    /// deadline says it is ready now.
    @Test func workPostedInTheLoopMakesTheDeadlineNow() throws {
        let loop = try MainRunLoop()
        #expect(loop.nextDeadline == nil)
        var ran = false
        try loop.executeInLoop { ran = true }
        #expect(try #require(loop.nextDeadline) <= loop.now)
        try loop.dispatchReady()
        #expect(ran)
        #expect(loop.nextDeadline == nil)
    }

    /// A callback that posts again each time: each dispatch runs one round
    /// and returns, so the driver's own loop keeps running.
    @Test func aCallbackThatAlwaysPostsDoesNotHoldTheDriver() throws {
        let loop = try MainRunLoop()
        var runs = 0
        func again() { runs += 1; try! loop.executeInLoop(again) }
        try loop.executeInLoop(again)
        for _ in 0..<3 { try loop.dispatchReady() }
        #expect(runs >= 3)
        #expect(try #require(loop.nextDeadline) <= loop.now)
    }

    /// The observers see the driver's passes: a wait announced before
    /// each return that leaves nothing ready, and heard on the next wake.
    @Test func observersAndIdleHandlersRunInDrivenPasses() throws {
        let loop = try MainRunLoop()
        var log: [String] = []
        try loop.addObserver(activities: [.beforeWaiting, .afterWaiting]) { log.append("\($0)") }
        _ = try loop.executeWhenIdle { log.append("idle") }
        #expect(try #require(loop.nextDeadline) <= loop.now)
        try loop.dispatchReady()
        #expect(log == ["idle", "beforeWaiting"])
        try loop.executeInLoop { log.append("work") }
        try loop.dispatchReady()
        #expect(log == ["idle", "beforeWaiting", "afterWaiting", "work", "beforeWaiting"])
    }

    /// Driving is an alternative to `run()`: from inside a callback it is refused.
    @Test func aDispatchFromACallbackIsRefused() throws {
        let loop = try MainRunLoop()
        var refused: MainLoopError?
        try loop.executeInLoop {
            do throws(MainLoopError) { try loop.dispatchReady() } catch { refused = error }
        }
        try loop.dispatchReady()
        #expect(refused == .reentrantDispatch)
    }
}

/// The same protocol on the real sd-event (libsystemd): an io source on the
/// backend descriptor and a time source for the next deadline.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct SDEventDrivenLoopTests {
    /// What the C driver's callbacks reach; used on the loop's thread only.
    final class Driven: @unchecked Sendable {
        let loop: MainRunLoop
        var finished = false
        var failure: MainLoopError?
        init(loop: MainRunLoop) { self.loop = loop }
    }

    @Test func sdEventRunsTheLoopsTimersPostsAndDescriptors() throws {
        let loop = try MainRunLoop()
        let driven = Driven(loop: loop)
        var log: [String] = []
        let start = loop.now
        var timerAt: Duration?
        loop.scheduleTimer(after: .milliseconds(20)) {
            timerAt = loop.now - start
            log.append("timer")
        }
        let pipe = TestPipe()
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            pipe.drain()
            log.append("descriptor")
            try! loop.executeInLoop {
                log.append("posted in the loop")
            }
        }
        let poster = TestThread {
            usleep(30_000)
            pipe.writeByte()
            usleep(10_000)
            try! loop.execute { driven.finished = true }
        }
        let status = sd_event_peer_drive(try loop.backendFileDescriptor(), { context in
            let driven = Unmanaged<Driven>.fromOpaque(context!).takeUnretainedValue()
            guard let deadline = driven.loop.nextDeadline else { return -1 }
            let remaining = deadline - driven.loop.now
            guard remaining > .zero else { return 0 }
            let (seconds, attoseconds) = remaining.components
            return seconds * 1_000_000 + (attoseconds + 999_999_999_999) / 1_000_000_000_000
        }, { context in
            let driven = Unmanaged<Driven>.fromOpaque(context!).takeUnretainedValue()
            do throws(MainLoopError) { try driven.loop.dispatchReady() } catch {
                driven.failure = error
                driven.finished = true
            }
        }, { context in
            Unmanaged<Driven>.fromOpaque(context!).takeUnretainedValue().finished ? 1 : 0
        }, Unmanaged.passUnretained(driven).toOpaque())
        poster.join()
        try source.remove()
        #expect(status == 0)
        #expect(driven.failure == nil)
        #expect(log == ["timer", "descriptor", "posted in the loop"])
        #expect(try #require(timerAt) >= .milliseconds(20), "a 20 ms loop timer fired early under sd-event")
    }
}
