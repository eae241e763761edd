import MainLoop
import SystemNotifications

extension Application {
    /// Enters a busy section of the engine (an input, a transition, a
    /// delivery): inputs issued on the loop thread meanwhile wait in the inbox.
    @inline(__always)
    func enterEngine(transition: Bool = false) { activity.enter(transition: transition) }

    /// Leaves a busy section; leaving the outermost one applies the inputs
    /// issued meanwhile, so they take effect right after the current input
    /// (before the call that issued it returns).
    @inline(__always)
    func leaveEngine(transition: Bool = false) {
        if activity.leave(transition: transition) { applyPendingInputs() }
        if scheduledWorkAwaitsConditions && activity.isIdle { scheduledWorkConditionsMayHaveChanged() }
    }

    /// Applies every input that is waiting in the inbox (queued on the loop
    /// thread while the engine was busy, or posted from another thread), in
    /// order. Called before an input issued on the loop thread takes effect,
    /// so that it takes effect after them.
    func applyPendingInputs() {
        guard activity.isIdle, inbox.hasPendingEvents else { return }
        activity.beginDrain()
        defer { activity.endDrain() }
        inbox.drainNow()
    }

    /// Puts an input issued on the loop thread behind those waiting: applied
    /// now if the engine is idle, else when its busy section ends.
    func queueInLoop(_ entry: InboxEntry) throws(MainLoopError) {
        // Inputs other threads posted before this one take effect before
        // it (BEHAVIOUR.md §8: arrival order), though the loop has not
        // received them yet.
        inbox.receiveArrived()
        try inbox.postInLoop(entry)
        if activity.isBusy { activity.noteQueued() } else { applyPendingInputs() }
    }

    /// Issues an input: at once on the loop thread with the engine idle and
    /// nothing waiting; behind what waits otherwise.
    func enqueue(_ entry: InboxEntry) throws(MainLoopError) {
        guard loop.inLoop else {
            try inbox.post(entry)
            return
        }
        guard !activity.isBusy, !inbox.hasPendingEvents else {
            try queueInLoop(entry)
            return
        }
        applyQueued(entry)
    }

    /// Applies one input from the inbox; every outcome is reported (a
    /// completion, an engine event or the input's own observations).
    func applyQueued(_ entry: InboxEntry) {
        enterEngine()
        defer { leaveEngine() }
        switch entry {
        case .lifecycle(let command, let completion):
            if hasInputObservers { noteInput(.lifecycle(command)) }
            let steps: [LifecycleStep]
            do throws(LifecycleError) {
                steps = try machine.plan(command)
            } catch {
                emit(.commandRejected(command, error))
                completion?(.failure(error))
                return
            }
            runTransition(steps)
            completion?(.success(state))
        case .system(let event):
            do throws(NotificationCenterError) {
                let outcome = try table.record(event, mode: holdingMode)
                if hasInputObservers { noteInput(.system(event)) }
                apply(outcome)
            } catch {
                emit(.systemEventRefused(error))
            }
        case .prepared(let event):
            do throws(NotificationCenterError) {
                let outcome = try table.record(event, mode: holdingMode)
                if hasInputObservers { notePrepared(event) }
                apply(outcome)
            } catch {
                emit(.systemEventRefused(error))
            }
        case .input(let input):
            if hasInputObservers { noteInput(.input(input)) }
            receiveInput(input)
        case .memoryWarning:
            if hasInputObservers { noteInput(.memoryWarning) }
            deliverMemoryWarning()
        }
    }

    /// A handle that issues inputs from any thread, in arrival order with
    /// every other input.
    public var poster: EngineInputPoster { EngineInputPoster(inbox: inbox) }
}

/// A Sendable handle for issuing inputs to an application from any thread
/// (event sources, supervisors, the control socket's workers). Inputs take
/// effect when the loop reaches them (also when posted on the loop thread),
/// in arrival order with every other input (BEHAVIOUR.md §8);
/// what is refused is reported to the application's
/// engine observers (``EngineEvent/commandRejected(_:_:)``,
/// ``EngineEvent/systemEventRefused(_:)``).
public struct EngineInputPoster: Sendable {
    let inbox: EventChannel<InboxEntry>

    /// Issues `input`.
    /// - Throws: ``/MainLoop/MainLoopError/shutDown`` after the loop was shut down.
    public func post(_ input: EngineInput) throws(MainLoopError) {
        switch input {
        case .lifecycle(let command): try inbox.post(.lifecycle(command, completion: nil))
        case .system(let event): try inbox.post(.system(event))
        case .input(let id): try inbox.post(.input(id))
        case .memoryWarning: try inbox.post(.memoryWarning)
        }
    }

    /// Posts a system event.
    /// - Throws: ``/MainLoop/MainLoopError/shutDown`` after the loop was shut down.
    public func post(_ event: SystemEvent) throws(MainLoopError) {
        try inbox.post(.system(event))
    }

    /// Queues a lifecycle command; `completion` runs on the loop thread.
    /// - Throws: ``/MainLoop/MainLoopError/shutDown`` after the loop was shut down.
    public func submit(_ command: LifecycleCommand,
                       completion: (@Sendable (Result<AppState, LifecycleError>) -> Void)? = nil) throws(MainLoopError) {
        try inbox.post(.lifecycle(command, completion: completion))
    }
}
