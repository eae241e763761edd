/// A one-shot or repeating timer on a ``MainRunLoop``'s clock.
///
/// Timers live in the loop's own binary heap ordered by (deadline, sequence),
/// so timers due at the same instant fire in the order they were scheduled
/// (first in, first out) on both the real and the manual clock. A timer never
/// fires before its deadline. A repeating timer keeps its schedule
/// (start + k·interval): its next fire is scheduled when the previous one
/// ran, and fires missed through lateness are skipped, not bunched.
///
/// Loop thread only.
public final class LoopTimer {
    let scheduler: TimerScheduler
    private let handler: () -> Void

    /// When the timer fires next (meaningful while ``isScheduled``).
    /// Loop thread only, like every field here, so none pays a dynamic
    /// exclusivity check (the timer schedule+cancel row of `compare`, probe `timer`).
    @exclusivity(unchecked) public internal(set) var deadline: LoopInstant = .zero
    /// The repeat interval, to the nanosecond (the clock's resolution), or
    /// nil for a one-shot timer.
    public var interval: Duration? { intervalNanoseconds > 0 ? .nanoseconds(intervalNanoseconds) : nil }
    /// The repeat interval in nanoseconds (at least 1), or 0 for a one-shot
    /// timer. With the rate limit's window boxed, a timer is 80 bytes of
    /// heap, not 144 (the million-timers rows of `compare`).
    @exclusivity(unchecked) private var intervalNanoseconds: Int64 = 0
    /// The slot in the scheduler while scheduled, or -1.
    @exclusivity(unchecked) var slot: Int32 = -1
    /// True while the handler runs, so a repeating timer is re-armed after it.
    @exclusivity(unchecked) private var isFiring = false
    @exclusivity(unchecked) private var cancelledWhileFiring = false
    /// The rate limit's window, if one is set (read on every fire).
    @exclusivity(unchecked) private var window: TimerRateLimitWindow?

    /// The timer's rate limit, if any.
    public var rateLimit: RateLimit? { window?.current.limit }

    /// Limits fires to `limit` (nil: no limit). A fire past the burst does
    /// not run: the timer is scheduled for the window's end instead, where
    /// it runs once, and a repeating timer goes on from there.
    public func setRateLimit(_ limit: RateLimit?) {
        scheduler.core.preconditionInLoop()
        window = limit.map { TimerRateLimitWindow(RateLimitWindow($0)) }
    }

    init(scheduler: TimerScheduler, handler: @escaping () -> Void) {
        self.scheduler = scheduler
        self.handler = handler
    }

    /// Whether the timer is waiting to fire.
    public var isScheduled: Bool { slot >= 0 }

    /// (Re)schedules the timer `delay` from now, replacing any earlier schedule.
    public func schedule(after delay: Duration, repeating interval: Duration? = nil) {
        schedule(at: scheduler.core.now + delay, repeating: interval)
    }

    /// (Re)schedules the timer at `deadline`, replacing any earlier schedule.
    /// With `interval`, it then repeats at deadline + k·interval; an interval
    /// below one nanosecond (the clock's resolution) is taken as one.
    public func schedule(at deadline: LoopInstant, repeating interval: Duration? = nil) {
        scheduler.core.preconditionInLoop()
        let step = interval.map { max($0.nanosecondsClamped, 1) } ?? 0
        let wasScheduled = isScheduled
        self.deadline = deadline
        intervalNanoseconds = step
        cancelledWhileFiring = false
        // A scheduled timer moves: it keeps its slot and the scheduler's
        // reference (a timeout reset by scheduling it again).
        if wasScheduled { scheduler.move(self) } else { scheduler.schedule(self) }
    }

    /// Cancels the timer. Returns whether it was scheduled. Cancelling a
    /// repeating timer from its own handler stops it from repeating.
    @discardableResult
    public func cancel() -> Bool {
        scheduler.core.preconditionInLoop()
        if isFiring { cancelledWhileFiring = true }
        guard isScheduled else { return false }
        scheduler.cancel(self)
        return true
    }

    /// Called by the loop once the timer has been taken off the heap.
    func fire(now: LoopInstant) {
        if let window, !window.current.admits(at: now) {
            scheduler.core.rateLimitPauses += 1
            schedule(at: window.current.windowEnd, repeating: interval)
            return
        }
        isFiring = true
        cancelledWhileFiring = false
        handler()
        isFiring = false
        let step = intervalNanoseconds
        guard step > 0, !cancelledWhileFiring, !isScheduled else { return }
        // Keep the schedule: the next multiple of the interval after now.
        let current = scheduler.core.now.nanoseconds
        var (next, overflow) = deadline.nanoseconds.addingReportingOverflow(step)
        if !overflow, next <= current {
            let missed = (current - next) / step + 1
            let (skipped, overflow2) = missed.multipliedReportingOverflow(by: step)
            (next, overflow) = overflow2 ? (0, true) : next.addingReportingOverflow(skipped)
        }
        // Past the end of the clock's range the timer has no next fire.
        guard !overflow else { return }
        deadline = LoopInstant(nanoseconds: next)
        scheduler.schedule(self)
    }
}

/// A timer's rate-limit window, boxed: most timers have none, and the
/// window inline would add 48 bytes to each.
final class TimerRateLimitWindow {
    var current: RateLimitWindow
    init(_ window: RateLimitWindow) { current = window }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension LoopTimer: Sendable {}
