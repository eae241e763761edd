import MainLoop

/// An app timer: a loop timer that respects suspension (BEHAVIOUR.md §5).
///
/// While the app runs it fires like any loop timer. If it comes due while
/// the app is suspended it does not fire then: it is remembered (with its
/// first missed due time) and fires once after the resume sequence. A
/// repeating timer that missed fires collapses them into that one fire and
/// then continues at the next start + k·interval after the resume time.
/// It belongs to the run that scheduled it: a kill cancels it, and it never
/// fires into a later run. Loop thread only; released on another thread,
/// its loop timer is cancelled on the loop's thread.
public final class AppTimer {
    /// The repeat interval, or nil for one-shot.
    public let interval: Duration?
    private weak var application: Application?
    private weak var run: AppRun?
    private let loop: MainRunLoop
    private let handler: () -> Void
    private var loopTimer: LoopTimer!
    /// The first due time missed while suspended, if any.
    private var firstMissedDue: LoopInstant?

    init(application: Application, run: AppRun, after delay: Duration, repeating interval: Duration?,
         handler: @escaping () -> Void) {
        self.application = application
        self.run = run
        self.loop = application.loop
        self.interval = interval
        self.handler = handler
        loopTimer = loop.makeTimer { [weak self] in self?.cameDue() }
        loopTimer.schedule(after: delay, repeating: interval)
    }

    deinit {
        let timer = LoopBound(handingOver: loopTimer!, to: loop)
        if loop.inLoop {
            timer.value.cancel()
        } else {
            // Hop to the loop. A loop that is shut down (execute throws) has
            // freed its timers already: nothing is left to cancel.
            try? loop.execute { timer.value.cancel() }
        }
    }

    /// Whether the timer will still fire (scheduled, or owed a missed fire).
    public var isPending: Bool { loopTimer.isScheduled || firstMissedDue != nil }

    /// Cancels the timer, including a missed fire it is owed. Cancelling a
    /// fired one-shot or a cancelled timer is a no-op.
    public func cancel() {
        loop.preconditionInLoop()
        cancelForKill()
        forget()
    }

    private func forget() {
        run?.timers[ObjectIdentifier(self)] = nil
        run?.missedTimers.removeAll { $0 === self }
    }

    private func cameDue() {
        guard let application, let run, application.currentRun === run else {
            loopTimer.cancel()
            return
        }
        if application.state.runsAppCode {
            if interval == nil { forget() }
            handler()
            return
        }
        // Suspended: owe one fire and stop repeating until the resume.
        if firstMissedDue == nil {
            firstMissedDue = loopTimer.deadline
            run.missedTimers.append(self)
        }
        loopTimer.cancel()
    }

    /// The owed fire after a resume: re-arm a repeating timer on its
    /// schedule first (so its handler may cancel it), then run the handler.
    func fireMissed() {
        guard let missed = firstMissedDue else { return }
        firstMissedDue = nil
        if let interval {
            let step = max(1, interval.nanosecondsClamped)
            let now = loop.now.nanoseconds
            let elapsedSteps = (now &- missed.nanoseconds) / step &+ 1
            loopTimer.schedule(at: LoopInstant(nanoseconds: missed.nanoseconds &+ elapsedSteps &* step), repeating: interval)
        } else {
            forget()
        }
        handler()
    }

    func cancelForKill() {
        loopTimer.cancel()
        firstMissedDue = nil
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension AppTimer: Sendable {}
