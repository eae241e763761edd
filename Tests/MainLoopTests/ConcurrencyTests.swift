import Dispatch
import Glibc
@_spi(Testing) import MainLoop
import Synchronization
import Testing
import TestSupport

/// An actor isolated to a loop through its executor (the documented pattern).
private actor LoopBoundModel {
    let loop: MainRunLoop
    var values: [Int] = []
    init(loop: MainRunLoop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }
    func append(_ value: Int) -> Bool {
        values.append(value)
        return loop.inLoop
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct ConcurrencyTests {
    @Test func anActorOnALoopExecutorRunsOnThatLoopInOrder() async throws {
        let thread = try LoopThread.start()
        let model = LoopBoundModel(loop: thread.loop)
        for value in 0..<50 { #expect(await model.append(value)) }
        #expect(await model.values == Array(0..<50))
        try thread.stopAndJoin()
    }

    @Test func aTaskPreferringTheLoopExecutorRunsItsNonisolatedCodeOnTheLoop() async throws {
        let thread = try LoopThread.start()
        let loop = thread.loop
        let onLoop = await Task(executorPreference: loop.executor) { loop.inLoop }.value
        #expect(onLoop)
        try thread.stopAndJoin()
    }

    /// `assumeIsolated` from a plain loop callback (a posted closure): the
    /// runtime asks the executor's `isIsolatingCurrentContext()`.
    @Test func assumeIsolatedWorksFromPlainLoopCallbacks() throws {
        let loop = try MainRunLoop()
        let model = LoopBoundModel(loop: loop)
        var result: [Int] = []
        try loop.executeInLoop {
            result = model.assumeIsolated { model in
                _ = model.append(7)
                return model.values
            }
        }
        try loop.runUntilIdle()
        #expect(result == [7])
        #expect(loop.executor.isIsolatingCurrentContext() == true)
        let elsewhere = LockedValue<Bool?>(nil)
        let thread = TestThread { elsewhere.withLock { $0 = loop.executor.isIsolatingCurrentContext() } }
        thread.join()
        #expect(elsewhere.withLock { $0 } == false)
    }
}

/// Runs a watch of `limit` whose body waits (up to 30 s) for the watch's
/// own overrun report. Returns whether the report came while the body still
/// ran, and the outcome; `heard` and `.overran` are a watchdog on time.
private func watchUntilReported(_ loop: MainRunLoop, limit: Duration) -> (heard: Bool, outcome: WatchdogOutcome) {
    let reported = DispatchSemaphore(value: 0)
    var heard = false
    let outcome = loop.runWatched(limit: limit, onOverrun: { reported.signal() }) {
        heard = reported.wait(timeout: .now() + 30) == .success
    }
    return (heard, outcome)
}

/// The calling thread's name, as the kernel keeps it (newline-terminated).
private func currentThreadName() -> String {
    let descriptor = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return "unreadable" }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 32)
    let count = read(descriptor, &buffer, buffer.count)
    return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : "unreadable"
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct WatchdogTests {
    @Test func realClockWatchdogNoticesABlockedLoopThread() throws {
        let loop = try MainRunLoop()
        let outcome = loop.runWatched(limit: .milliseconds(20)) { loop.blockMainThread(for: .milliseconds(80)) }
        guard case .overran = outcome else {
            Issue.record("expected an overrun, got \(outcome)")
            return
        }
        let quick = loop.runWatched(limit: .milliseconds(500)) {}
        guard case .completed = quick else {
            Issue.record("expected completion, got \(quick)")
            return
        }
    }

    /// The overrun is reported while the body is still running, from the
    /// watchdog's thread: the body waits for that report itself.
    @Test func overrunIsReportedWhileTheBodyStillRuns() throws {
        let loop = try MainRunLoop()
        let (heard, outcome) = watchUntilReported(loop, limit: .milliseconds(20))
        #expect(heard)
        guard case .overran = outcome else {
            Issue.record("expected an overrun, got \(outcome)")
            return
        }
    }

    /// The report comes from the watchdog's own thread, named so that
    /// `top -H` and `ps -L` tell it apart from the loop.
    @Test func theOverrunReportComesFromTheThreadNamedMlWatchdog() throws {
        let loop = try MainRunLoop()
        let reported = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var reporter = ""
        _ = loop.runWatched(limit: .milliseconds(20), onOverrun: {
            reporter = currentThreadName()
            reported.signal()
        }) {
            _ = reported.wait(timeout: .now() + 30)
        }
        #expect(reporter == "ml-watchdog\n")
    }

    /// A watch armed inside a longer one has the earlier deadline: the
    /// watchdog, asleep until the outer deadline, must wake for it.
    @Test func anInnerWatchWithAnEarlierDeadlineTripsOnTime() throws {
        let loop = try MainRunLoop()
        var inner: (heard: Bool, outcome: WatchdogOutcome)?
        let outer = loop.runWatched(limit: .seconds(60)) {
            inner = watchUntilReported(loop, limit: .milliseconds(20))
        }
        #expect(inner?.heard == true)
        guard case .overran = inner?.outcome, case .completed = outer else {
            Issue.record("expected the inner watch to overrun and the outer to complete: \(String(describing: inner)), \(outer)")
            return
        }
    }

    /// A watch whose body returned in time never reports an overrun later.
    /// Watches trip in deadline order, so once a later watch has tripped,
    /// the earlier one had its chance.
    @Test func aCompletedWatchNeverTripsAfterwards() throws {
        let loop = try MainRunLoop()
        let early = Atomic<Int>(0)
        // Limits long enough that no pause of a loaded machine overruns
        // the empty body.
        let completed = loop.runWatched(limit: .milliseconds(500), onOverrun: { early.add(1, ordering: .relaxed) }) {}
        guard case .completed = completed else {
            Issue.record("expected completion, got \(completed)")
            return
        }
        #expect(watchUntilReported(loop, limit: .milliseconds(600)).heard)
        #expect(early.load(ordering: .relaxed) == 0)
    }

    /// Loops on two threads are watched at once by the one watchdog, each
    /// against its own deadline.
    @Test func loopsOnTwoThreadsAreWatchedAtOnce() throws {
        let loop = try MainRunLoop()
        let other = try LoopThread.start()
        let otherOutcome = LockedValue<WatchdogOutcome?>(nil)
        let otherStarted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        try other.loop.execute {
            let outcome = other.loop.runWatched(limit: .seconds(60)) {
                otherStarted.signal()
                _ = release.wait(timeout: .now() + 30)
            }
            otherOutcome.withLock { $0 = outcome }
        }
        #expect(otherStarted.wait(timeout: .now() + 30) == .success)
        let (heard, outcome) = watchUntilReported(loop, limit: .milliseconds(20))
        release.signal()
        try other.stopAndJoin()
        #expect(heard)
        guard case .overran = outcome else {
            Issue.record("expected an overrun, got \(outcome)")
            return
        }
        guard case .completed = otherOutcome.withLock({ $0 }) else {
            Issue.record("expected the other loop's watch to complete")
            return
        }
    }
}
