import Glibc
import MainLoop
import Synchronization
import Testing
import TestSupport

/// Wake-up records, appended on the loop thread only.
private final class WakeLog: @unchecked Sendable {
    var entries: [(label: String, at: LoopInstant)] = []
    var errors: [String] = []
}

/// An actor isolated to the loop, as a service would write one.
private actor Sleeper {
    let loop: MainRunLoop
    let log: WakeLog
    init(loop: MainRunLoop, log: WakeLog) {
        self.loop = loop
        self.log = log
    }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    func sleep(_ label: String, for duration: Duration) async {
        do {
            try await loop.clock.sleep(for: duration)
            log.entries.append((label, loop.now))
        } catch {
            log.errors.append("\(label): \(error)")
        }
    }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct LoopClockTests {
    /// The example of testing async code deterministically in the guide "Async code on the main loop", as written there.
    @Test func refreshWaitsFiveSeconds() async throws {
        let loop = try MainRunLoop(deterministic: true)          // a manual clock
        let task = Task(executorPreference: loop.executor) {
            try await loop.clock.sleep(for: .seconds(5))
            return loop.now
        }
        try loop.advance(by: .seconds(4))                        // starts the task; nothing due
        try loop.advance(by: .seconds(1))                        // the sleep ends inside, at 5 s
        #expect(try await task.value == LoopInstant(nanoseconds: 5_000_000_000))
    }

    /// Deterministic: sleeps started before `advance` are resumed inside it,
    /// each at its own deadline, in deadline order, and loop-isolated code
    /// after the sleep runs before `advance` returns.
    @Test func deterministicSleepsResumeInsideAdvanceAtTheirExactInstant() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = WakeLog()
        let actor = Sleeper(loop: loop, log: log)
        for (label, milliseconds) in [("a", 300), ("b", 100), ("c", 300), ("d", 2_000)] {
            Task(executorPreference: loop.executor) { await actor.sleep(label, for: .milliseconds(milliseconds)) }
        }
        try loop.advance(by: .seconds(1))
        #expect(log.entries.map(\.label) == ["b", "a", "c"])
        #expect(log.entries.map(\.at) == [LoopInstant(nanoseconds: 100_000_000), LoopInstant(nanoseconds: 300_000_000),
                                          LoopInstant(nanoseconds: 300_000_000)])
        #expect(loop.now == LoopInstant(nanoseconds: 1_000_000_000))
        try loop.advance(to: LoopInstant(nanoseconds: 1_999_999_999))
        #expect(log.entries.count == 3, "never early")
        try loop.advance(by: .nanoseconds(1))
        #expect(log.entries.last?.label == "d")
        #expect(log.entries.last?.at == LoopInstant(nanoseconds: 2_000_000_000))
        #expect(loop.scheduledTimerCount == 0)
    }

    @Test func manyConcurrentSleepersWakeInDeadlineOrder() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = WakeLog()
        let actor = Sleeper(loop: loop, log: log)
        var generator = SystemRandomNumberGenerator()
        let delays = (0..<200).map { _ in Int.random(in: 1...5_000, using: &generator) }
        for (index, delay) in delays.enumerated() {
            Task(executorPreference: loop.executor) { await actor.sleep("\(index)", for: .milliseconds(delay)) }
        }
        try loop.advance(by: .seconds(6))
        #expect(log.entries.count == 200)
        let expected = delays.enumerated().sorted { ($0.element, $0.offset) < ($1.element, $1.offset) }
        #expect(log.entries.map(\.label) == expected.map { "\($0.offset)" })
        for entry in log.entries { #expect(entry.at == LoopInstant(nanoseconds: Int64(delays[Int(entry.label)!]) * 1_000_000)) }
    }

    @Test func cancellingTheTaskRemovesTheTimerAndThrowsCancellationError() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = WakeLog()
        let actor = Sleeper(loop: loop, log: log)
        let task = Task(executorPreference: loop.executor) { await actor.sleep("long", for: .seconds(60)) }
        try loop.runUntilIdle()
        #expect(loop.scheduledTimerCount == 1)
        task.cancel()
        try loop.runUntilIdle()
        #expect(log.errors == ["long: CancellationError()"])
        #expect(loop.scheduledTimerCount == 0, "the sleep's timer is removed")
        try loop.advance(by: .seconds(120))
        #expect(log.entries.isEmpty)
    }

    @Test func aSleepInACancelledTaskThrowsAtOnce() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = WakeLog()
        let actor = Sleeper(loop: loop, log: log)
        let task = Task(executorPreference: loop.executor) {
            withUnsafeCurrentTask { $0?.cancel() }
            await actor.sleep("x", for: .seconds(1))
        }
        try loop.runUntilIdle()
        _ = task
        #expect(log.errors == ["x: CancellationError()"])
        #expect(loop.scheduledTimerCount == 0)
    }

    @Test func sleepersThrowShutDownWhenTheLoopShutsDown() throws {
        let loop = try MainRunLoop(deterministic: true)
        let log = WakeLog()
        let actor = Sleeper(loop: loop, log: log)
        Task(executorPreference: loop.executor) { await actor.sleep("s", for: .seconds(5)) }
        try loop.runUntilIdle()
        try loop.shutdown()
        #expect(log.errors == ["s: the main loop is shut down"])
    }

    /// Real clock: from another thread's task, never early, and the task
    /// continues on the loop (its preferred executor).
    @Test func realClockSleepsAreNeverEarly() async throws {
        let thread = try LoopThread.start()
        let loop = thread.loop
        let clock = loop.clock
        try await withThrowingTaskGroup(of: (Duration, Duration, Bool).self) { group in
            for milliseconds in [1, 3, 5, 10, 20, 30] {
                group.addTask(executorPreference: loop.executor) {
                    let start = clock.now
                    try await clock.sleep(for: .milliseconds(milliseconds))
                    return (.milliseconds(milliseconds), clock.now - start, loop.inLoop)
                }
            }
            for try await (requested, slept, onLoop) in group {
                #expect(slept >= requested, "woke \(requested - slept) early")
                #expect(onLoop)
            }
        }
        // Task.sleep with the loop's clock, from a task on the global executor.
        let before = clock.now
        try await Task.sleep(for: .milliseconds(15), clock: clock)
        #expect(clock.now - before >= .milliseconds(15))
        try thread.stopAndJoin()
    }

    @Test func realClockCancellationFromAnotherThread() async throws {
        let thread = try LoopThread.start()
        let loop = thread.loop
        let task = Task { try await loop.clock.sleep(for: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(20))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // The timer is gone on the loop thread.
        let count = LockedValue(-1)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            do {
                try loop.execute {
                    count.withLock { $0 = loop.scheduledTimerCount }
                    continuation.resume()
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        #expect(count.withLock { $0 } == 0)
        try thread.stopAndJoin()
    }
}
