import Glibc
import MainLoop
import Synchronization
import Testing

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

@Suite(.timeLimit(.minutes(2))) struct ConcurrencyTests {
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

@Suite(.timeLimit(.minutes(2))) struct WatchdogTests {
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
}
