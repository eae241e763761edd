import MainLoop
import NIOCore

/// One scheduled task or callback of a ``MainLoopEventLoop``: a loop timer
/// at its deadline, what to run when it fires, and what to tell when it is
/// abandoned instead (shutdown, or a callback's cancellation).
///
/// Whoever takes it out of ``EventLoopState``'s pending table decides its
/// fate, once. Its timer is touched only on the loop thread.
final class ScheduledLoopWork {
    let id: UInt64
    let deadline: LoopInstant
    private let run: () -> Void
    private let abandoned: () -> Void
    /// The loop timer, once armed; nil when done. Loop thread.
    var timer: LoopTimer?

    init(id: UInt64, deadline: LoopInstant, run: @escaping () -> Void, abandoned: @escaping () -> Void) {
        self.id = id
        self.deadline = deadline
        self.run = run
        self.abandoned = abandoned
    }

    /// The timer fired and this work was still pending: it runs once.
    func fire() {
        timer = nil
        run()
    }

    /// Stops the timer (loop thread), if it is armed. After the loop shut
    /// down (its timers released, none scheduled) there is nothing to stop.
    func disarm() {
        if let timer, timer.isScheduled { timer.cancel() }
        timer = nil
    }

    /// Tells the owner that the work will never run.
    func abandon() {
        abandoned()
    }
}

/// Why a ``ScheduledLoopWork`` is `Sendable`: its closures are Sendable
/// captures (a promise, a Sendable handler), `timer` is touched only on
/// the loop thread, and the rest is immutable.
extension ScheduledLoopWork: @unchecked Sendable {}
