import MainLoop

/// An app timer: a loop timer that respects suspension (SPEC §5).
///
/// While the app runs it fires like any loop timer. If it comes due while
/// the app is suspended it does not fire then: it is remembered (with its
/// first missed due time) and fires once after the resume sequence. A
/// repeating timer that missed fires collapses them into that one fire and
/// then continues at the next start + k·interval after the resume time.
/// A kill cancels every app timer. Loop thread only.
public final class AppTimer {
    /// The repeat interval, or nil for one-shot.
    public let interval: Duration?
    private unowned let application: Application
    private let handler: () -> Void
    private var loopTimer: LoopTimer!
    /// The first due time missed while suspended, if any.
    var firstMissedDue: LoopInstant?

    init(application: Application, after delay: Duration, repeating interval: Duration?, handler: @escaping () -> Void) {
        self.application = application
        self.interval = interval
        self.handler = handler
        loopTimer = application.loop.makeTimer { [unowned self] in self.cameDue() }
        loopTimer.schedule(after: delay, repeating: interval)
    }

    /// Whether the timer will still fire (scheduled, or owed a missed fire).
    public var isPending: Bool { loopTimer.isScheduled || firstMissedDue != nil }

    /// Cancels the timer, including a missed fire it is owed. Cancelling a
    /// fired one-shot or a cancelled timer is a no-op.
    public func cancel() {
        application.loop.preconditionInLoop()
        loopTimer.cancel()
        firstMissedDue = nil
        application.forget(self)
    }

    private func cameDue() {
        if application.state.runsAppCode {
            if interval == nil { application.forget(self) }
            handler()
            return
        }
        // Suspended: owe one fire and stop repeating until the resume.
        if firstMissedDue == nil {
            firstMissedDue = loopTimer.deadline
            application.missedTimers.append(self)
        }
        loopTimer.cancel()
    }

    /// The owed fire after a resume: re-arm a repeating timer on its
    /// schedule first (so its handler may cancel it), then run the handler.
    func fireMissed() {
        guard let missed = firstMissedDue else { return }
        firstMissedDue = nil
        if let interval {
            let step = interval.nanosecondsClamped
            let now = application.loop.now.nanoseconds
            let elapsedSteps = (now - missed.nanoseconds) / step + 1
            loopTimer.schedule(at: LoopInstant(nanoseconds: missed.nanoseconds + elapsedSteps * step), repeating: interval)
        } else {
            application.forget(self)
        }
        handler()
    }

    func cancelForKill() {
        loopTimer.cancel()
        firstMissedDue = nil
    }
}
