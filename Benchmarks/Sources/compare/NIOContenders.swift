import Dispatch
import MainLoop
import MainLoopNIO
import NIOCore
import NIOPosix

/// The same NIO-shaped work on two EventLoops: a MainRunLoop's
/// `loop.eventLoop` (MainLoopNIO, the loop run by its own thread) and one
/// of SwiftNIO's own loops (issue 22). Each function takes `any EventLoop`,
/// so both sides run the very same code.
enum NIOContenders {
    /// `execute` from inside the loop, `events` times.
    static func executeInLoop(events: Int, on loop: any EventLoop) -> Double {
        let counter = Counter()
        let done = DispatchSemaphore(value: 0)
        return nanosecondsPerEvent(events) {
            loop.execute {
                for _ in 0..<events {
                    loop.execute {
                        counter.value += 1
                        if counter.value == events { done.signal() }
                    }
                }
            }
            done.wait()
            counter.value = 0
        }
    }

    /// `execute` from another thread, `events` times.
    static func executeCrossThread(events: Int, on loop: any EventLoop) -> Double {
        let counter = Counter()
        let done = DispatchSemaphore(value: 0)
        return nanosecondsPerEvent(events) {
            for _ in 0..<events {
                loop.execute {
                    counter.value += 1
                    if counter.value == events { done.signal() }
                }
            }
            done.wait()
            counter.value = 0
        }
    }

    /// Futures completed on `source` (a NIO loop) and hopped to `target`,
    /// where their callbacks run: what a service pays per NIO result it
    /// takes onto its loop.
    static func hop(events: Int, from source: any EventLoop, to target: any EventLoop) -> Double {
        let counter = Counter()
        let done = DispatchSemaphore(value: 0)
        return nanosecondsPerEvent(events) {
            source.execute {
                for _ in 0..<events {
                    let promise = source.makePromise(of: Void.self)
                    promise.futureResult.hop(to: target).whenSuccess {
                        counter.value += 1
                        if counter.value == events { done.signal() }
                    }
                    promise.succeed()
                }
            }
            done.wait()
            counter.value = 0
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
