import CGLib
import Glibc
import MainLoop
import MainLoopGLib
import Testing
import TestSupport

/// Real GLib (Debian's) run by a MainLoop: its callbacks on the loop's
/// thread, its timeouts never early, no CPU when nothing is due, wake-ups
/// from other threads, re-entrant calls both ways, and a clean release.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct GLibContextBridgeTests {
    /// A private context per test, so tests never share GLib's default one.
    private func withContext(_ body: (OpaquePointer) throws -> Void) rethrows {
        let context = g_main_context_new()!
        defer { g_main_context_unref(context) }
        try body(context)
    }

    /// Timeouts and idle sources run on the loop's thread, timeouts never
    /// before their time.
    @Test func glibCallbacksRunOnTheLoopThreadAndTimeoutsAreNeverEarly() throws {
        try withContext { context in
            let loop = try MainRunLoop()
            let bridge = try loop.runGLibContext(context)
            var onLoopThread: [Bool] = []
            var idleRuns = 0
            let start = g_get_monotonic_time()
            var elapsed = 0
            addIdle(to: context) {
                onLoopThread.append(loop.inLoop)
                idleRuns += 1
                return false
            }
            addTimeout(10, to: context) {
                elapsed = g_get_monotonic_time() - start
                onLoopThread.append(loop.inLoop)
                loop.stop()
                return false
            }
            try loop.run()
            bridge.release()
            #expect(idleRuns == 1)
            #expect(onLoopThread == [true, true])
            #expect(elapsed >= 10_000, "a 10 ms GLib timeout fired after \(elapsed) µs")
        }
    }

    /// GLib timeouts beside the loop's own timers, interleaved: neither is
    /// ever early; their lateness is printed (p50/p99), not judged here
    /// (a benchmark row compares them).
    @Test func glibTimeoutsAreLateNoMoreThanTheLoopsOwnTimers() throws {
        try withContext { context in
            let loop = try MainRunLoop()
            let bridge = try loop.runGLibContext(context)
            var glibLateness: [Duration] = [], loopLateness: [Duration] = []
            var round = 0
            func next() {
                guard round < 40 else { return loop.stop() }
                round += 1
                let scheduled = loop.now
                if round.isMultiple(of: 2) {
                    addTimeout(5, to: context) {
                        glibLateness.append(loop.now - scheduled - .milliseconds(5))
                        next()
                        return false
                    }
                } else {
                    loop.scheduleTimer(after: .milliseconds(5)) {
                        loopLateness.append(loop.now - scheduled - .milliseconds(5))
                        next()
                    }
                }
            }
            next()
            try loop.run()
            bridge.release()
            // GLib's timeout counts whole milliseconds from its own clock
            // read: never before 4 ms of the loop's clock (its read is later).
            #expect(glibLateness.allSatisfy { $0 >= .milliseconds(-1) })
            #expect(loopLateness.allSatisfy { $0 >= .zero })
            print("GLib timeout lateness p50 \(percentile(glibLateness, 0.5)) p99 \(percentile(glibLateness, 0.99)); "
                  + "loop timer p50 \(percentile(loopLateness, 0.5)) p99 \(percentile(loopLateness, 0.99))")
        }
    }

    /// A source attached from another thread wakes the waiting loop (GLib
    /// signals its wake-up descriptor, which the loop watches), 200 times,
    /// each after the last ran; the wake-up latency is printed (p50/p99).
    @Test func sourcesAddedFromAnotherThreadWakeTheLoop() throws {
        try withContext { context in
            let loop = try MainRunLoop()
            let bridge = try loop.runGLibContext(context)
            let rounds = 200
            let state = LockedValue((ran: 0, onLoopThread: 0, latencies: [Duration]()))
            let handed = Handed(value: (context, loop))
            let adder = TestThread {
                let (context, loop) = handed.value
                for round in 1...rounds {
                    usleep(500)
                    let sent = ContinuousClock.now
                    addIdle(to: context, priority: G_PRIORITY_DEFAULT) {
                        let latency = ContinuousClock.now - sent
                        let done = state.withLock { state in
                            state.ran += 1
                            if loop.inLoop { state.onLoopThread += 1 }
                            state.latencies.append(latency)
                            return state.ran == rounds
                        }
                        if done { loop.stop() }
                        return false
                    }
                    while state.withLock({ $0.ran }) < round { usleep(50) }
                }
            }
            try loop.run()
            adder.join()
            bridge.release()
            let (ran, onLoopThread, latencies) = state.withLock { $0 }
            #expect(ran == rounds && onLoopThread == rounds)
            print("GLib source from another thread → run on the loop: p50 \(percentile(latencies, 0.5)), "
                  + "p99 \(percentile(latencies, 0.99))")
        }
    }

    /// A loop callback that adds a GLib source (same thread: GLib signals
    /// no wake-up) and a GLib callback that posts loop work: both run.
    @Test func callsIntoEachOtherBothWork() throws {
        try withContext { context in
            let loop = try MainRunLoop()
            let bridge = try loop.runGLibContext(context)
            var log: [String] = []
            try loop.executeInLoop {
                log.append("loop work")
                addIdle(to: context) {
                    log.append("GLib idle")
                    try! loop.executeInLoop {
                        log.append("loop work from GLib")
                        loop.scheduleTimer(after: .milliseconds(1)) {
                            log.append("loop timer")
                            loop.stop()
                        }
                    }
                    return false
                }
            }
            try loop.run()
            bridge.release()
            #expect(log == ["loop work", "GLib idle", "loop work from GLib", "loop timer"])
        }
    }

    /// GLib's priorities hold among GLib's sources: a high-priority idle
    /// runs before a default-idle one added first; a source that removes
    /// itself and one that iterates the context re-entrantly both work.
    @Test func glibsOwnOrderAndReentrancyHold() throws {
        try withContext { context in
            let loop = try MainRunLoop()
            let bridge = try loop.runGLibContext(context)
            var log: [String] = []
            addIdle(to: context, priority: G_PRIORITY_DEFAULT_IDLE) {
                log.append("default idle")
                loop.stop()
                return false
            }
            addIdle(to: context, priority: G_PRIORITY_HIGH) {
                log.append("high")
                // A nested iteration, as a GLib library may run one.
                addIdle(to: context, priority: G_PRIORITY_HIGH) {
                    log.append("nested")
                    return false
                }
                _ = g_main_context_iteration(context, 0)
                return false
            }
            try loop.run()
            bridge.release()
            #expect(log == ["high", "nested", "default idle"])
        }
    }

    /// With a GLib timeout far off and nothing else due, the loop's thread
    /// sleeps: under 1 % of a core over 2 s.
    @Test func nothingDueUsesNoCPU() throws {
        try withContext { context in
            let loop = try MainRunLoop()
            let bridge = try loop.runGLibContext(context)
            addTimeout(60_000, to: context) { false }
            let cpuBefore = threadCPUTime()
            loop.scheduleTimer(after: .seconds(2)) { loop.stop() }
            try loop.run()
            let used = threadCPUTime() - cpuBefore
            bridge.release()
            #expect(used < .milliseconds(20), "the loop's thread used \(used) of CPU in 2 s with nothing due")
        }
    }

    /// 10,000 timeouts and 10,000 idle sources, added and done, round
    /// after round: nothing is left watched and the memory stays flat. In
    /// a process of its own, so no other test's memory counts as growth.
    @Test func tenThousandSourcesComeAndGoWithoutGrowth() async {
        await #expect(processExitsWith: .success) {
            alarm(60)
            try GLibContextBridgeTests.addAndRunTenThousandSourcesFourTimes()
        }
    }

    /// The body of `tenThousandSourcesComeAndGoWithoutGrowth`, in its child
    /// process (synchronous: `run()` blocks its thread).
    private static func addAndRunTenThousandSourcesFourTimes() throws {
        let context = g_main_context_new()!
        let loop = try MainRunLoop()
        let bridge = try loop.runGLibContext(context)
        var residentAfterRound: [Int] = []
        for _ in 0..<4 {
            var remaining = 20_000
            for index in 0..<10_000 {
                addTimeout(UInt32(index % 3), to: context) {
                    remaining -= 1
                    if remaining == 0 { loop.stop() }
                    return false
                }
                addIdle(to: context) {
                    remaining -= 1
                    if remaining == 0 { loop.stop() }
                    return false
                }
            }
            try loop.run()
            precondition(remaining == 0, "\(remaining) sources did not run")
            precondition(bridge.watchedDescriptorCount == 1, "only GLib's wake-up descriptor stays watched")
            residentAfterRound.append(residentBytes())
        }
        bridge.release()
        g_main_context_unref(context)
        let growth = residentAfterRound[3] - residentAfterRound[1]
        precondition(growth < 2 << 20, "resident set grew by \(growth) bytes from round 2 to round 4")
    }

    /// Releasing leaves GLib's sources attached: whoever runs the context
    /// next (here GLib itself) runs them.
    @Test func releaseLeavesGLibsSourcesForTheNextOwner() throws {
        try withContext { context in
            let loop = try MainRunLoop()
            let bridge = try loop.runGLibContext(context)
            var fired = false
            addTimeout(1, to: context) {
                fired = true
                return false
            }
            bridge.release()
            #expect(bridge.isReleased)
            #expect(bridge.watchedDescriptorCount == 0)
            try loop.runUntilIdle()
            #expect(!fired)
            while !fired { _ = g_main_context_iteration(context, 1) }
            #expect(fired)
        }
    }

    /// A context another thread owns is refused, and nothing is changed.
    @Test func aContextOwnedByAnotherThreadIsRefused() throws {
        try withContext { context in
            let loop = try MainRunLoop()
            let acquired = LockedValue(false), release = LockedValue(false)
            let handed = Handed(value: context)
            let owner = TestThread {
                precondition(g_main_context_acquire(handed.value) != 0)
                acquired.withLock { $0 = true }
                while !release.withLock({ $0 }) { usleep(1_000) }
                g_main_context_release(handed.value)
            }
            while !acquired.withLock({ $0 }) { usleep(1_000) }
            #expect(throws: GLibBridgeError.contextOwnedElsewhere) { _ = try loop.runGLibContext(context) }
            release.withLock { $0 = true }
            owner.join()
            let bridge = try loop.runGLibContext(context)
            bridge.release()
        }
    }
}
