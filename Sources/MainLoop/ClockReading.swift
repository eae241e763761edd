/// How a real-clock loop reads `CLOCK_MONOTONIC` for ``MainRunLoop/now``.
public enum ClockReading: Sendable, Equatable {
    /// Every read of `now` reads the clock (the default).
    case continuous
    /// `now` is the instant the current callback began, read once when it
    /// begins; a timer's callback begins at the timer's deadline. Within a
    /// callback `now` stands still, as the manual clock does during a
    /// replay's step, so timers and limits computed from it land on the
    /// same instants when the session is replayed (``MainRunLoop/advance(to:)``
    /// runs them at their deadlines too). The instant of a callback is held
    /// back to just before the earliest due timer that has not run yet, and
    /// never goes back. Outside any callback (before `run()`), `now` is the
    /// instant of the last callback, or of the loop's creation. A timer
    /// still never fires before its deadline on the real clock.
    ///
    /// For the same reason the loop orders its work as a replay does: what
    /// comes from outside (descriptors, signals, other threads' posts) runs
    /// below every ``LoopPriority``, one callback a pass, once the work made
    /// ready before it has run; a timer of a later instant waits for the
    /// work made ready at the current one; the timers of one instant run
    /// before the next instant's (docs/BEHAVIOUR.md §10).
    case perCallback
}
