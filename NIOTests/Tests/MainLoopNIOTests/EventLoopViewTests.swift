import AppLifecycle
import MainLoop
import MainLoopNIO
import NIOCore
import Testing

/// A loop's SwiftNIO views on the manual clock: identity, time, order and
/// priorities. (SwiftNIO's own tests, in NIOGenericTests, cover the
/// EventLoop contract; these cover what is MainLoop's.)
@Suite("MainLoopEventLoop on a deterministic loop", .timeLimit(.minutes(1)))
struct EventLoopViewTests {
    @Test func theSameViewComesBackWhileHeld() throws {
        let loop = try MainRunLoop(deterministic: true)
        let view = loop.eventLoop
        #expect(view === loop.eventLoop)
        #expect(view !== loop.eventLoop(priority: .system))
        #expect(view.loop === loop && view.priority == .app && !view.runsAsAppCode)
        #expect(view.inEventLoop)
    }

    @Test func nowAndScheduledTasksFollowTheManualClockToTheExactInstant() throws {
        let loop = try MainRunLoop(deterministic: true)
        let eventLoop = loop.eventLoop
        #expect(eventLoop.now == .uptimeNanoseconds(0))
        let ranAt = Log()
        eventLoop.scheduleTask(in: .seconds(5)) { ranAt.append("5s task @\(loop.now)") }
        eventLoop.scheduleTask(deadline: .uptimeNanoseconds(2_000_000_001)) { ranAt.append("2.000000001s task @\(loop.now)") }
        try loop.advance(by: .seconds(2))
        #expect(ranAt.lines.isEmpty)
        try loop.advance(by: .nanoseconds(1))
        #expect(ranAt.lines == ["2.000000001s task @2.000000001s"])
        try loop.advance(by: .milliseconds(2_999))
        #expect(ranAt.lines.count == 1)
        try loop.advance(by: .seconds(60))
        #expect(ranAt.lines.last == "5s task @5s")
        #expect(eventLoop.now == .uptimeNanoseconds(64_999_000_001))
    }

    @Test func tasksDueAtOneInstantRunInScheduleOrderAndExecuteIsFirstInFirstOut() throws {
        let loop = try MainRunLoop(deterministic: true)
        let eventLoop = loop.eventLoop
        let order = Log()
        for index in 0..<5 { eventLoop.scheduleTask(in: .seconds(1)) { order.append("\(index)") } }
        for index in 5..<10 { eventLoop.execute { order.append("\(index)") } }
        try loop.runUntilIdle()
        #expect(order.lines == ["5", "6", "7", "8", "9"])
        try loop.advance(by: .seconds(1))
        #expect(order.lines == ["5", "6", "7", "8", "9", "0", "1", "2", "3", "4"])
    }

    @Test func aCancelledTaskNeverRunsAndItsFutureFailsWithCancelled() throws {
        let loop = try MainRunLoop(deterministic: true)
        let ran = Slot<Bool>()
        let scheduled = loop.eventLoop.scheduleTask(in: .seconds(1)) { ran.set(true) }
        let failure = Slot<any Error>()
        scheduled.futureResult.whenFailure { failure.set($0) }
        scheduled.cancel()
        try loop.advance(by: .seconds(2))
        #expect(ran.value == nil)
        #expect(failure.value as? EventLoopError == .cancelled)
        #expect(loop.scheduledTimerCount == 0)
    }

    @Test func higherPriorityViewsRunFirst() throws {
        let loop = try MainRunLoop(deterministic: true)
        let order = Log()
        loop.eventLoop.execute { order.append("app") }
        loop.eventLoop(priority: .input).execute { order.append("input") }
        loop.eventLoop(priority: .system).execute { order.append("system") }
        try loop.runUntilIdle()
        #expect(order.lines == ["system", "input", "app"])
    }

    @Test func completionsOnTheLoopThreadRunAtOnceWhateverTheView() throws {
        // The views share one thread, so each is "in its event loop" there:
        // NIO runs callbacks inline, as it does on any loop, and only what
        // is posted (execute, submit, timers, completions from other
        // threads) is ordered by priority.
        let loop = try MainRunLoop(deterministic: true)
        let promise = loop.eventLoop(priority: .system).makePromise(of: Int.self)
        let seen = Log()
        promise.futureResult.hop(to: loop.eventLoop).whenSuccess { seen.append("app got \($0)") }
        promise.succeed(42)
        #expect(seen.lines == ["app got 42"])
    }
}

/// Shutdown as NIO expects it, and what the loop's own shutdown does.
@Suite("MainLoopEventLoop shutdown", .timeLimit(.minutes(1)))
struct EventLoopShutdownTests {
    @Test func shuttingTheViewDownFailsPendingWorkRefusesNewTasksAndKeepsExecuting() throws {
        let loop = try MainRunLoop(deterministic: true)
        let eventLoop = loop.eventLoop
        let pending = eventLoop.scheduleTask(in: .hours(1)) { 1 }
        let pendingResult = Slot<Result<Int, any Error>>()
        pending.futureResult.whenComplete { pendingResult.set($0) }
        try eventLoop.syncShutdownGracefully()
        #expect(eventLoop.isShutDown && loop.eventLoop(priority: .system).isShutDown)
        #expect(loop.scheduledTimerCount == 0)
        try loop.runUntilIdle()
        #expect(throws: EventLoopError.shutdown) { try pendingResult.value?.get() }

        let submitted = Slot<Result<Int, any Error>>()
        eventLoop.submit { 2 }.whenComplete { submitted.set($0) }
        #expect(throws: EventLoopError.shutdown) { try submitted.value?.get() }
        let late = Slot<Result<Int, any Error>>()
        eventLoop.scheduleTask(in: .seconds(1)) { 3 }.futureResult.whenComplete { late.set($0) }
        #expect(throws: EventLoopError.shutdown) { try late.value?.get() }
        struct Handler: NIOScheduledCallbackHandler, Sendable {
            func handleScheduledCallback(eventLoop: some EventLoop) {}
        }
        #expect(throws: EventLoopError.shutdown) { try eventLoop.scheduleCallback(in: .seconds(1), handler: Handler()) }

        let executed = Slot<Bool>()
        eventLoop.execute { executed.set(true) }
        try loop.runUntilIdle()
        #expect(executed.value == true)
        #expect(!loop.isShutDown)
    }

    @Test func theLoopsShutdownFailsPendingTasksAndCountsWorkWithNowhereToRun() throws {
        let loop = try MainRunLoop(deterministic: true)
        let eventLoop = loop.eventLoop
        let result = Slot<Result<Int, any Error>>()
        eventLoop.scheduleTask(in: .seconds(1)) { 1 }.futureResult.whenComplete { result.set($0) }
        try loop.shutdown()
        #expect(throws: EventLoopError.shutdown) { try result.value?.get() }
        #expect(eventLoop.isShutDown)
        eventLoop.execute {}
        #expect(eventLoop.droppedWorkCount == 1)
    }
}

/// An application's view runs app code: held while suspended.
@Suite("Application.eventLoop runs app code", .timeLimit(.minutes(1)))
struct ApplicationEventLoopTests {
    final class Recorder: ApplicationDelegate {
        let log = Log()
        func applicationWillEnterForeground(_ application: Application) { log.append("willEnterForeground") }
        func applicationDidBecomeActive(_ application: Application) { log.append("didBecomeActive") }
    }

    @Test func workWaitsForTheResumeWhileSuspendedAndIsDroppedOnceTerminated() throws {
        let loop = try MainRunLoop(deterministic: true)
        let recorder = Recorder()
        let log = recorder.log
        let application = try Application(loop: loop, delegate: recorder)
        let eventLoop = application.eventLoop
        #expect(eventLoop === application.eventLoop && eventLoop.runsAsAppCode && eventLoop !== loop.eventLoop)
        try application.perform(.launch)
        try loop.runUntilIdle()
        try application.perform(.home)
        try loop.runUntilIdle()
        #expect(application.state == .suspended)
        log.removeAll()

        eventLoop.execute { log.append("execute") }
        eventLoop.scheduleTask(in: .seconds(1)) { log.append("task due at 1s") }
        loop.eventLoop.execute { log.append("loop work") }
        try loop.advance(by: .seconds(2))
        #expect(log.lines == ["loop work"])

        try application.perform(.foreground)
        try loop.runUntilIdle()
        #expect(log.lines == ["loop work", "willEnterForeground", "didBecomeActive", "execute", "task due at 1s"])

        try application.perform(.terminate)
        let dropped = application.droppedAppWorkCount
        eventLoop.execute { log.append("after terminate") }
        try loop.runUntilIdle()
        #expect(log.lines.last == "task due at 1s")
        #expect(application.droppedAppWorkCount == dropped + 1)
    }
}
