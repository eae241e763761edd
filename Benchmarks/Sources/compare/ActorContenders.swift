import Dispatch
import MainLoop
import NIOCore
import NIOPosix

/// An actor isolated to a given serial executor (a MainLoop loop's or a
/// SwiftNIO event loop's), as a service would write one.
actor ExecutorBoundCounter {
    private let executor: any SerialExecutor
    private var count = 0

    init(executor: any SerialExecutor) { self.executor = executor }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func increment() -> Int {
        count += 1
        return count
    }
}

/// The same actor on Swift's default executor (the global concurrent pool).
actor DefaultCounter {
    private var count = 0

    func increment() -> Int {
        count += 1
        return count
    }
}

/// Actor calls from a task on the global pool: each `await` hops to the
/// actor's executor and back, which is what a service pays when code
/// elsewhere calls into state kept on its loop.
enum ActorContenders {
    /// Runs `calls` awaited calls from a detached task and waits for them.
    private static func roundTrips(_ calls: Int, _ call: @escaping @Sendable () async -> Int) -> Double {
        let done = DispatchSemaphore(value: 0)
        return nanosecondsPerEvent(calls) {
            Task.detached {
                var last = 0
                for _ in 0..<calls { last = await call() }
                precondition(last > 0)
                done.signal()
            }
            done.wait()
        }
    }

    /// An actor on `loop.executor` of a loop running on its own thread.
    static func mainLoopActor(calls: Int) throws -> Double {
        let thread = try LoopThread.start()
        let counter = ExecutorBoundCounter(executor: thread.loop.executor)
        let nanoseconds = roundTrips(calls) { await counter.increment() }
        try thread.stopAndJoin()
        return nanoseconds
    }

    /// An actor on a SwiftNIO event loop's executor.
    static func nioActor(calls: Int, group: MultiThreadedEventLoopGroup) -> Double {
        let counter = ExecutorBoundCounter(executor: group.next().executor)
        return roundTrips(calls) { await counter.increment() }
    }

    /// A default actor.
    static func defaultActor(calls: Int) -> Double {
        let counter = DefaultCounter()
        return roundTrips(calls) { await counter.increment() }
    }
}
