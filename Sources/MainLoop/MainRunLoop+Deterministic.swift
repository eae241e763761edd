extension MainRunLoop {
    /// Moves the manual clock forward by `duration`, running everything that
    /// comes due on the way, in order. See ``advance(to:)``.
    public func advance(by duration: Duration) throws(MainLoopError) {
        try advance(to: now + duration)
    }

    /// Moves the manual clock to `target`, running everything that comes due
    /// on the way: first what is ready at the current instant (so a task
    /// started before the advance registers its sleep now), then each due
    /// timer at its own deadline (the clock reads that deadline while it
    /// runs), and after each instant's timers the work they posted (and the
    /// tasks they resumed, when isolated to this loop) runs until the loop
    /// is idle. Timers due at the same instant run in the order they were
    /// scheduled. A target in the past is a no-op apart from running what
    /// is already due. Nothing sleeps. ``stop()`` from a callback ends the
    /// advance after that instant's work, with the clock where it got to
    /// (the request is consumed), after the exit handlers and their work,
    /// as a stopping `run()` runs them.
    ///
    /// - Throws: ``MainLoopError/notDeterministic`` on a real-clock loop.
    public func advance(to target: LoopInstant) throws(MainLoopError) {
        preconditionInLoop()
        guard isDeterministic else { throw .notDeterministic }
        try runUntilIdle()
        if consumeStopRequest() { return try runExitWorkAfterStop() }
        while let deadline = nextTimerDeadline, deadline <= target {
            if deadline > manualNow { manualNow = deadline }
            try runUntilIdle()
            if consumeStopRequest() { return try runExitWorkAfterStop() }
        }
        if target > manualNow { manualNow = target }
        try runUntilIdle()
    }
}
