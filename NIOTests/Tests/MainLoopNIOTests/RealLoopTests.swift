import MainLoop
import MainLoopNIO
import NIOCore
import NIOPosix
import Glibc
import Testing

/// Runs `body` on a new thread and waits for it to end.
private func runOnNewThread(_ body: @escaping @Sendable () -> Void) {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    let status = pthread_create(&thread, nil, { raw in
        Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(status == 0, "pthread_create failed")
    pthread_join(thread, nil)
}

/// A real-clock loop on its own thread, with SwiftNIO's own loops beside it.
@Suite("MainLoopEventLoop on a real loop", .timeLimit(.minutes(1)))
struct RealLoopTests {
    @Test func scheduledTasksNeverRunEarly() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let eventLoop = thread.loop.eventLoop
        let futures = (1...50).map { index in
            let deadline = eventLoop.now + .microseconds(Int64(index * 100))
            return eventLoop.scheduleTask(deadline: deadline) { eventLoop.now >= deadline }.futureResult
        }
        let onTime = try EventLoopFuture.whenAllSucceed(futures, on: eventLoop).wait()
        #expect(onTime.allSatisfy { $0 })
    }

    @Test func aFutureCompletedOnNIOsThreadsHopsOntoTheLoopThread() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let eventLoop = thread.loop.eventLoop
        let onLoop = try group.next().submit { 21 }
            .hop(to: eventLoop)
            .map { value in (value * 2, eventLoop.inEventLoop, thread.loop.inLoop) }
            .wait()
        #expect(onLoop == (42, true, true))
    }

    /// A thread started after the loop's own ended is not the loop's, even
    /// when the C library hands it the old thread's `pthread_t`: NIO's
    /// `preconditionNotInEventLoop` (which `wait()` checks first) holds
    /// there, and nothing would run inline.
    @Test func aThreadStartedAfterTheLoopsEndedIsNotTheLoop() throws {
        let thread = try LoopThread.start()
        let eventLoop = thread.loop.eventLoop
        try thread.stopAndJoin()
        let mistaken = LockedValue(0)
        for _ in 0..<50 {
            runOnNewThread {
                if eventLoop.inEventLoop { mistaken.withLock { $0 += 1 } }
                eventLoop.preconditionNotInEventLoop()
            }
        }
        #expect(mistaken.withLock { $0 } == 0)
    }

    @Test func executeAndCancellationWorkFromOtherThreads() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let eventLoop = thread.loop.eventLoop
        let ran = LockedValue(0)
        let tasks = (0..<100).map { _ in eventLoop.scheduleTask(in: .seconds(30)) { ran.withLock { $0 += 1 } } }
        for task in tasks { task.cancel() }
        // Cancels reach the loop at system priority, in order: a system job
        // posted after them runs after them, and reads the count on the
        // loop thread (an app-priority job could run first, and reading the
        // count from this thread raced with the loop: ThreadSanitizer in CI).
        let remaining = try thread.loop.eventLoop(priority: .system).submit { thread.loop.scheduledTimerCount }.wait()
        #expect(remaining == 0)
        #expect(ran.withLock { $0 } == 0)
    }
}

/// Cancellation handlers run where NIO runs them: on the loop thread, even
/// when the cancel or the shutdown comes from another thread.
@Suite("Cancellation handlers on the loop thread", .timeLimit(.minutes(1)))
struct CancellationThreadTests {
    struct Handler: NIOScheduledCallbackHandler, Sendable {
        let log: Log
        func handleScheduledCallback(eventLoop: some EventLoop) { log.append("ran") }
        func didCancelScheduledCallback(eventLoop: some EventLoop) {
            log.append("cancelled on the loop: \(eventLoop.inEventLoop)")
        }
    }

    @Test func aCancelFromAnotherThread() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let eventLoop = thread.loop.eventLoop
        let log = Log()
        let callback = try eventLoop.scheduleCallback(in: .seconds(30), handler: Handler(log: log))
        callback.cancel()
        callback.cancel()
        try eventLoop.submit {}.wait()
        #expect(log.lines == ["cancelled on the loop: true"])
        #expect(thread.loop.scheduledTimerCount == 0)
    }

    @Test func aShutdownFromAnotherThreadCallsBackAfterTheHandlers() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let eventLoop = thread.loop.eventLoop
        let log = Log()
        for _ in 0..<3 { _ = try eventLoop.scheduleCallback(in: .seconds(30), handler: Handler(log: log)) }
        try eventLoop.syncShutdownGracefully()
        #expect(log.lines == Array(repeating: "cancelled on the loop: true", count: 3))
        // The callback came after the loop stopped the timers.
        #expect(thread.loop.scheduledTimerCount == 0)
    }
}
