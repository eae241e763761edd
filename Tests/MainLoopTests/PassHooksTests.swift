import Glibc
import MainLoop
import Testing
import TestSupport

/// Observers, idle handlers and exit handlers: where in a pass they run,
/// and that none of them makes the loop spin or lose a stop.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct PassHooksTests {
    /// One `run()`: entry, a pass that waits (before/after waiting around
    /// the wait, after-waiting before the callback of what woke the loop),
    /// the exit handler, exit.
    @Test func observersSeeAPassInCFRunLoopOrder() throws {
        let loop = try MainRunLoop()
        let pipe = TestPipe()
        let log = Recorder()
        try loop.addObserver(activities: .all) { log("\($0)") }
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            pipe.drain()
            log("fd")
            loop.stop()
        }
        try loop.addExitHandler { log("exit handler") }
        let writer = TestThread { usleep(2_000); pipe.writeByte() }
        try loop.run()
        writer.join()
        try source.remove()
        let entries = log.entries
        #expect(entries.first == "entry")
        #expect(entries.last == "exit")
        // The exit work is passes that never wait: no wait announced after it.
        let exitHandler = try #require(entries.firstIndex(of: "exit handler"))
        #expect(!entries[exitHandler...].contains("beforeWaiting"))
        // The pass that woke for the fd: waiting, woken, then the callback.
        let fd = try #require(entries.firstIndex(of: "fd"))
        #expect(Array(entries[(fd - 2)...fd]) == ["beforeWaiting", "afterWaiting", "fd"])
        #expect(Array(entries[1...2]) == ["beforeTimers", "beforeSources"])
        // Every wait is announced and every wake heard, in pairs.
        let waits = entries.filter { $0 == "beforeWaiting" }.count
        #expect(waits >= 1)
        #expect(entries.filter { $0 == "afterWaiting" }.count == waits)
    }

    /// Added while `run()` is inside libevent's own loop (no hooks yet):
    /// the loop leaves it after the callback and calls the new observer.
    @Test func anObserverAddedWhileRunningIsCalled() throws {
        let loop = try MainRunLoop()
        var seen: [LoopActivity] = []
        try loop.executeInLoop {
            _ = try? loop.addObserver(activities: .beforeWaiting, repeats: false) { activity in
                seen.append(activity)
                loop.stop()
            }
        }
        try loop.run()
        #expect(seen == [.beforeWaiting])
    }

    /// Idle work runs after every priority's ready work, in the order
    /// added; work an idle handler posts runs before the next idle handler
    /// (sd-event orders a low-priority defer source the same way).
    @Test func idleRunsAfterEveryPriorityAndYieldsToWorkItPosts() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = try Self.runIdleOrderSequence(on: loop)
        #expect(log.entries == ["system", "app", "idle 1", "posted by idle 1", "idle 2"])
        try loop.runUntilIdle()
        #expect(log.entries.count == 5, "one-shot idle work runs once")
    }

    /// A repeating idle handler runs once each time the loop is about to
    /// sleep, and then the loop sleeps: over a quarter of a second with one
    /// timer, it runs a handful of times, not thousands.
    @Test func aRepeatingIdleHandlerNeverMakesTheLoopSpin() throws {
        let loop = try MainRunLoop()
        var idleRuns = 0
        let idle = try loop.addIdle { idleRuns += 1 }
        var ticks = 0
        let timer = loop.scheduleTimer(after: .milliseconds(50), repeating: .milliseconds(50)) {
            ticks += 1
            if ticks == 5 { loop.stop() }
        }
        let cpuBefore = threadCPUTime()
        try loop.run()
        let cpu = threadCPUTime() - cpuBefore
        timer.cancel()
        #expect(idleRuns >= 5 && idleRuns <= 12, "one run per wait: \(idleRuns)")
        #expect(cpu < .milliseconds(100), "the loop slept: \(cpu) of CPU in 250 ms")
        try idle.remove()
        #expect(throws: MainLoopError.sourceRemoved) { try idle.remove() }
    }

    /// A repeating idle handler that posts work every time cannot starve
    /// the idle handlers added after it: the round goes on where it stopped.
    @Test func aBusyIdleHandlerDoesNotStarveTheNextOne() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = Recorder()
        var busyRuns = 0
        let busy = try loop.addIdle {
            busyRuns += 1
            log("busy")
            if busyRuns < 3 { try? loop.executeInLoop { log("work") } }
        }
        try loop.executeWhenIdle { log("quiet") }
        try loop.runUntilIdle()
        #expect(log.entries == ["busy", "work", "quiet"])
        // Each time the loop would wait again, the busy handler runs again.
        try loop.runUntilIdle()
        #expect(log.entries == ["busy", "work", "quiet", "busy", "work", "busy"])
        try loop.runUntilIdle()
        #expect(log.entries.suffix(2) == ["busy", "busy"])
        try busy.remove()
    }

    /// Exit handlers run by priority, then in the order added; the work
    /// each posts runs before the next; a stop during exit changes nothing;
    /// the exit observers come last. Exit handlers run once.
    @Test func exitHandlersRunInOrderWithTheirWork() throws {
        let loop = try MainRunLoop()
        let log = Recorder()
        try loop.addExitHandler(priority: .app) { log("app 1") }
        try loop.addExitHandler(priority: .system) {
            log("system")
            loop.stop()
            try? loop.executeInLoop { log("posted by system") }
        }
        let cancelled = try loop.addExitHandler(priority: .input) { log("cancelled") }
        try cancelled.remove()
        try loop.addExitHandler(priority: .app) { log("app 2") }
        try loop.addObserver(activities: .exit) { _ in log("exit") }
        try loop.executeInLoop { loop.stop() }
        try loop.run()
        #expect(log.entries == ["system", "posted by system", "app 1", "app 2", "exit"])
        // The stop requested during exit did not carry over into this run.
        try loop.executeInLoop { log("second run"); loop.stop() }
        try loop.run()
        #expect(log.entries.suffix(2) == ["second run", "exit"])
    }

    /// A stop requested before `run()` starts still runs the exit work.
    @Test func aStopBeforeRunStillRunsExitHandlers() throws {
        let loop = try MainRunLoop()
        var ran = false
        try loop.addExitHandler { ran = true }
        loop.stop()
        try loop.run()
        #expect(ran)
    }

    /// On the manual clock: observers and idle handlers run as the clock is
    /// advanced, and a stop taken by `advance` runs the exit handlers.
    @Test func deterministicAdvanceRunsHooks() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = Recorder()
        try loop.addObserver(activities: [.beforeWaiting, .afterWaiting]) { log("\($0)") }
        try loop.addIdle { log("idle") }
        try loop.addExitHandler { log("exit handler") }
        loop.scheduleTimer(after: .seconds(1)) { log("timer"); loop.stop() }
        try loop.advance(by: .seconds(2))
        #expect(log.entries == ["idle", "beforeWaiting", "afterWaiting", "timer", "idle", "beforeWaiting",
                                "afterWaiting", "exit handler", "idle"])
    }

    /// Handlers that add and remove hooks, themselves included, while they
    /// run: nothing is skipped or run twice, nothing crashes.
    @Test func handlersChangeTheHooksWhileRunning() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = Recorder()
        var first: LoopObserver!
        first = try loop.addObserver(activities: .beforeWaiting) { _ in
            log("first")
            try? first.remove()
            _ = try? loop.addObserver(activities: .beforeWaiting, repeats: false) { _ in log("added") }
        }
        try loop.addObserver(activities: .beforeWaiting, repeats: false) { _ in log("one-shot") }
        var idle: IdleSource!
        idle = try loop.addIdle {
            log("idle")
            try? idle.remove()
            _ = try? loop.executeWhenIdle { log("idle added") }
        }
        try loop.runUntilIdle()
        #expect(log.entries == ["idle", "first", "one-shot"])
        try loop.runUntilIdle()
        #expect(log.entries == ["idle", "first", "one-shot", "idle added", "added"])
        try loop.runUntilIdle()
        #expect(log.entries.count == 5)
    }

    /// After shutdown nothing can be added, and what was added reads as removed.
    @Test func shutdownRemovesHooks() throws {
        let loop = try MainRunLoop(deterministic: true)
        let observer = try loop.addObserver(activities: .all) { _ in }
        let idle = try loop.addIdle {}
        try loop.shutdown()
        #expect(observer.isRemoved && idle.isRemoved)
        #expect(throws: MainLoopError.shutDown) { try loop.addIdle {} }
        #expect(throws: MainLoopError.shutDown) { try loop.addExitHandler {} }
    }
}

extension PassHooksTests {
    /// Two one-shot idle handlers (the first posts app work), then app and
    /// system work, run until idle: what this suite and the sd-event
    /// comparison (`SDEventDifferentialTests`, the same on sd-event) check.
    static func runIdleOrderSequence(on loop: MainRunLoop) throws -> Recorder {
        let log = Recorder()
        try loop.executeWhenIdle {
            log("idle 1")
            do { try loop.executeInLoop(priority: .app) { log("posted by idle 1") } } catch { log("post failed: \(error)") }
        }
        try loop.executeWhenIdle { log("idle 2") }
        try loop.executeInLoop(priority: .app) { log("app") }
        try loop.executeInLoop(priority: .system) { log("system") }
        try loop.runUntilIdle()
        return log
    }
}

/// CPU time the calling thread has used.
func threadCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
}
