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

    /// Which executor-bound actor a row measures.
    enum Side: CaseIterable { case mainLoop, nio }

    /// The last measurement's ns per call for each side, each taken once by its row.
    nonisolated(unsafe) private static var shares = SharedMeasurement<Side>()

    /// The ns per call of `side` for this round: its share of the last
    /// interleaved measurement if its row did not take it yet, else a new one.
    static func result(_ side: Side, calls: Int, group: MultiThreadedEventLoopGroup) throws -> Double {
        try shares.take(side) { try measureBoth(calls: calls, group: group) }
    }

    /// The mean cost of a call to an actor on `loop.executor` and of one to
    /// an actor on a SwiftNIO loop's executor, measured together: one task
    /// alternates the two calls (which goes first alternates too) and times
    /// each, so both see the same seconds of the VM. Measured one after
    /// the other, a round's two rows see different seconds, and their
    /// paired ratio varies by a factor of two from round to round.
    private static func measureBoth(calls: Int, group: MultiThreadedEventLoopGroup) throws -> [Side: Double] {
        let thread = try LoopThread.start()
        let onLoop = ExecutorBoundCounter(executor: thread.loop.executor)
        let onNIO = ExecutorBoundCounter(executor: group.next().executor)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var totals = (mainLoop: 0.0, nio: 0.0)
        Task.detached {
            var last = 0
            for index in 0..<calls {
                for step in 0..<2 {
                    let start = nowNanoseconds()
                    if (index + step) & 1 == 0 {
                        last = await onLoop.increment()
                        totals.mainLoop += nowNanoseconds() - start
                    } else {
                        last = await onNIO.increment()
                        totals.nio += nowNanoseconds() - start
                    }
                }
            }
            precondition(last > 0)
            done.signal()
        }
        done.wait()
        try thread.stopAndJoin()
        return [.mainLoop: totals.mainLoop / Double(calls), .nio: totals.nio / Double(calls)]
    }

    /// `calls` calls to one side's executor-bound actor alone (a probe: to
    /// count what a call costs each side, e.g. its system calls).
    static func oneSide(_ side: Side, calls: Int) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let thread = try LoopThread.start()
        let counter = ExecutorBoundCounter(executor: side == .mainLoop ? thread.loop.executor : group.next().executor)
        _ = roundTrips(calls) { await counter.increment() }
        try thread.stopAndJoin()
        try group.syncShutdownGracefully()
    }

    /// A default actor.
    static func defaultActor(calls: Int) -> Double {
        let counter = DefaultCounter()
        return roundTrips(calls) { await counter.increment() }
    }
}
