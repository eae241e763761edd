import Dispatch
import Glibc
import Synchronization

/// How a watched callback ended.
public enum WatchdogOutcome: Equatable, Sendable {
    /// It returned within its limit, after `elapsed`.
    case completed(elapsed: Duration)
    /// It was still running at `deadline` (start + limit).
    case overran(deadline: LoopInstant)
}

/// The race between a watched callback returning and its watchdog firing,
/// decided by one compare-and-swap.
private final class WatchdogArm: Sendable {
    static let armed: UInt8 = 0, returned: UInt8 = 1, tripped: UInt8 = 2
    let state = Atomic<UInt8>(WatchdogArm.armed)
}

extension MainRunLoop {
    private static let watchdogQueue = DispatchQueue(label: "MainLoop.watchdog")

    /// Runs `body` on the loop thread and reports whether it returned within
    /// `limit`.
    ///
    /// On the real clock a watchdog outside the loop thread notices a body
    /// still running at the deadline and calls `onOverrun` from its own
    /// thread right then (the loop thread is busy, so this is the only way
    /// to react on time); the outcome is `.overran` once the body returns.
    /// That watchdog is one thread for the process, started by the first
    /// watch; a watch costs a lock and no allocation, and once `body`
    /// returns nothing of it stays armed.
    /// On the manual clock, `blockMainThread(for:)` inside the body moves
    /// the clock, and a block that reaches the deadline stops there: the
    /// clock reads the deadline, as if the watchdog had fired at it.
    public func runWatched(limit: Duration, onOverrun: (@Sendable () -> Void)? = nil,
                           _ body: () -> Void) -> WatchdogOutcome {
        preconditionInLoop()
        let start = now
        let deadline = start + limit
        if isDeterministic {
            let outer = manualWatchdog
            manualWatchdog = (deadline, false)
            body()
            let tripped = manualWatchdog?.tripped ?? false
            manualWatchdog = outer
            if tripped { onOverrun?() }
            return tripped ? .overran(deadline: deadline) : .completed(elapsed: now - start)
        }
        // `now` is CLOCK_MONOTONIC here, the watchdog thread's clock.
        guard let watch = WatchdogThread.shared.arm(deadline: deadline, onOverrun: onOverrun) else {
            return runWatchedOnDispatch(start: start, limit: limit, onOverrun: onOverrun, body)
        }
        body()
        let elapsed = now - start
        let returnedFirst = WatchdogThread.shared.disarm(watch)
        if returnedFirst && elapsed <= limit { return .completed(elapsed: elapsed) }
        if returnedFirst { onOverrun?() }
        return .overran(deadline: deadline)
    }

    /// The watch when the watchdog thread cannot be started (the process is
    /// out of threads): a libdispatch timer, still on time, though it stays
    /// armed for the whole limit after `body` returned.
    private func runWatchedOnDispatch(start: LoopInstant, limit: Duration, onOverrun: (@Sendable () -> Void)?,
                                      _ body: () -> Void) -> WatchdogOutcome {
        let arm = WatchdogArm()
        let item = DispatchWorkItem {
            if arm.state.compareExchange(expected: WatchdogArm.armed, desired: WatchdogArm.tripped,
                                         ordering: .acquiringAndReleasing).exchanged {
                onOverrun?()
            }
        }
        let nanos = max(0, limit.nanosecondsClamped)
        Self.watchdogQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanos)), execute: item)
        body()
        let elapsed = now - start
        let returnedFirst = arm.state.compareExchange(expected: WatchdogArm.armed, desired: WatchdogArm.returned,
                                                      ordering: .acquiringAndReleasing).exchanged
        item.cancel()
        if returnedFirst && elapsed <= limit { return .completed(elapsed: elapsed) }
        if returnedFirst { onOverrun?() }
        return .overran(deadline: start + limit)
    }

    /// Keeps the loop thread busy for `duration`, as a slow callback would.
    ///
    /// On the real clock the thread really sleeps. On the manual clock the
    /// clock moves forward by `duration` at once without running anything
    /// (nothing can run while the thread is busy), stopping at the deadline
    /// of an enclosing ``runWatched(limit:onOverrun:_:)``.
    ///
    /// For tests and scenario replay (a simulated slow callback), not for
    /// production code: `@_spi(Testing) import MainLoop` reaches it.
    @_spi(Testing) public func blockMainThread(for duration: Duration) {
        preconditionInLoop()
        guard isDeterministic else {
            let nanos = max(0, duration.nanosecondsClamped)
            var request = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
            return
        }
        var target = manualNow + duration
        if let watchdog = manualWatchdog, target >= watchdog.deadline, duration > watchdog.deadline - manualNow {
            target = watchdog.deadline
            manualWatchdog?.tripped = true
        }
        if target > manualNow { manualNow = target }
    }
}
