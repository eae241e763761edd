import Dispatch
import MainLoop
import MainLoopNIO
import NIOCore
import NIOPosix

/// The same NIO-shaped work on two EventLoops: a MainRunLoop's
/// `loop.eventLoop` (MainLoopNIO, the loop run by its own thread) and one
/// of SwiftNIO's own loops. Each function takes `any EventLoop`,
/// so both sides run the very same code.
enum NIOContenders {
    /// Calls `start` with a tick to run `events` times on the loop, and
    /// waits for the last tick.
    private static func ticks(_ events: Int, _ start: (@escaping @Sendable () -> Void) -> Void) -> Double {
        let counter = Counter()
        let done = DispatchSemaphore(value: 0)
        let tick: @Sendable () -> Void = {
            counter.value += 1
            if counter.value == events { done.signal() }
        }
        return nanosecondsPerEvent(events) {
            start(tick)
            done.wait()
            counter.value = 0
        }
    }

    /// `execute` from inside the loop, `events` times.
    static func executeInLoop(events: Int, on loop: any EventLoop) -> Double {
        ticks(events) { tick in
            loop.execute {
                for _ in 0..<events { loop.execute(tick) }
            }
        }
    }

    /// `execute` from another thread, `events` times.
    static func executeCrossThread(events: Int, on loop: any EventLoop) -> Double {
        ticks(events) { tick in
            for _ in 0..<events { loop.execute(tick) }
        }
    }

    /// Futures completed on `source` (a NIO loop) and hopped to `target`,
    /// where their callbacks run: what a service pays per NIO result it
    /// takes onto its loop.
    static func hop(events: Int, from source: any EventLoop, to target: any EventLoop) -> Double {
        ticks(events) { tick in
            source.execute {
                for _ in 0..<events {
                    let promise = source.makePromise(of: Void.self)
                    promise.futureResult.hop(to: target).whenSuccess(tick)
                    promise.succeed()
                }
            }
        }
    }

    /// `scheduleTask(in:)` then `cancel()`, on the loop thread, with
    /// `pending` other tasks scheduled.
    static func scheduleCancel(operations: Int, pending: Int, on loop: any EventLoop) throws -> Double {
        try loop.submit {
            let waiting = (0..<pending).map { index in loop.scheduleTask(in: .seconds(3600 + Int64(index))) {} }
            let nanoseconds = nanosecondsPerEvent(operations) {
                for _ in 0..<operations {
                    loop.scheduleTask(in: .seconds(60)) {}.cancel()
                }
            }
            for task in waiting { task.cancel() }
            return nanoseconds
        }.wait()
    }
}
