import MainLoop

/// No app code while suspended, async included: on ``/MainLoop/MainRunLoop/main``,
/// `DispatchQueue.main` blocks and `@MainActor` jobs that become ready while
/// the app is suspended wait for the resume.
///
/// The app holds the main queue when it is suspended. The first time work
/// becomes ready during the hold, a marker joins the app's deferred work, so
/// at the resume point of `foreground` or `wake` (after the held
/// notifications and the missed timers) the main queue runs in FIFO order
/// with the work posted before it; whatever arrived later runs right after.
/// A killed app keeps the hold (no app code while not running); it ends at
/// the next launch, and what waited runs once the launch has finished.
///
/// What cannot be gated: work on other executors (the global concurrent
/// executor, actors on other loops or on `loop.executor`, other dispatch
/// queues), and blocks or jobs already running when the app is suspended.
extension Application {
    /// Called when the app enters `newState` from `previous`.
    func updateMainQueueHold(from previous: AppState, to newState: AppState) {
        guard loop.runsMainQueue else { return }
        if newState == .suspended {
            holdsMainQueue = true
            loop.holdMainQueue { [weak self] in self?.mainQueueReadyWhileHeld() }
        } else if previous == .notRunning, newState != .notRunning, holdsMainQueue {
            // After a kill: the launch runs first, then what waited.
            holdsMainQueue = false
            loop.releaseMainQueue(drainNow: false)
        }
    }

    /// At the resume point, after the deferred work (and its marker): the
    /// hold ends and whatever is still waiting runs now.
    func releaseMainQueueAfterResume() {
        guard holdsMainQueue, state.runsAppCode else { return }
        holdsMainQueue = false
        loop.releaseMainQueue(drainNow: true)
    }

    private func mainQueueReadyWhileHeld() {
        // FIFO with posted work: the queue's place is where its first work arrived.
        currentRun?.deferWork { [weak self] in self?.loop.drainMainQueue() }
    }
}
