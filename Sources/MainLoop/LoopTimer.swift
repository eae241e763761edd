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
    unowned let loop: MainRunLoop
    private let handler: () -> Void

    /// When the timer fires next (meaningful while ``isScheduled``).
    public internal(set) var deadline: LoopInstant = .zero
    /// The repeat interval, or nil for a one-shot timer.
    public private(set) var interval: Duration?
    /// FIFO tie-breaker: assigned each time the timer enters the heap.
    var sequence: UInt64 = 0
    /// Position in the loop's heap, or -1 when not scheduled.
    var heapIndex = -1
    /// True while the handler runs, so a repeating timer is re-armed after it.
    private var isFiring = false
    private var cancelledWhileFiring = false

    init(loop: MainRunLoop, handler: @escaping () -> Void) {
        self.loop = loop
        self.handler = handler
    }

    /// Whether the timer is waiting to fire.
    public var isScheduled: Bool { heapIndex >= 0 }

    /// (Re)schedules the timer `delay` from now, replacing any earlier schedule.
    public func schedule(after delay: Duration, repeating interval: Duration? = nil) {
        schedule(at: loop.now + delay, repeating: interval)
    }

    /// (Re)schedules the timer at `deadline`, replacing any earlier schedule.
    /// With `interval`, it then repeats at deadline + k·interval; an interval
    /// below one nanosecond (the clock's resolution) is taken as one.
    public func schedule(at deadline: LoopInstant, repeating interval: Duration? = nil) {
        loop.preconditionInLoop()
        let interval = interval.map { max($0, .nanoseconds(1)) }
        if isScheduled { loop.removeTimer(self) }
        self.deadline = deadline
        self.interval = interval
        cancelledWhileFiring = false
        loop.insertTimer(self)
    }

    /// Cancels the timer. Returns whether it was scheduled. Cancelling a
    /// repeating timer from its own handler stops it from repeating.
    @discardableResult
    public func cancel() -> Bool {
        loop.preconditionInLoop()
        if isFiring { cancelledWhileFiring = true }
        guard isScheduled else { return false }
        loop.removeTimer(self)
        return true
    }

    /// Called by the loop once the timer has been taken off the heap.
    func fire(now: LoopInstant) {
        isFiring = true
        cancelledWhileFiring = false
        handler()
        isFiring = false
        guard let interval, !cancelledWhileFiring, !isScheduled else { return }
        // Keep the schedule: the next multiple of the interval after now.
        let step = interval.nanosecondsClamped
        var next = deadline.nanoseconds &+ step
        let current = loop.now.nanoseconds
        if next <= current {
            let missed = (current - next) / step + 1
            next &+= missed &* step
        }
        deadline = LoopInstant(nanoseconds: next)
        loop.insertTimer(self)
    }
}
