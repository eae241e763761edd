import CLinux
import MainLoop
import MainLoopJSON
import SystemNotifications

/// The notification engine inside the application: the lifecycle sets the
/// holding mode, the resume flushes and a kill discards; live changes and
/// merged ones reach the observers (app code, so only while the app runs).
extension Application {
    /// The public face of the notification engine.
    public var notifications: SystemNotificationCenter { SystemNotificationCenter(application: self) }

    /// Holding starts at `suspended` and ends at the resume point of a
    /// `foreground` or `wake` (not at its first state line).
    func updateHoldingMode(for newState: AppState) {
        switch newState {
        case .suspended: holdingMode = .holding
        case .notRunning: holdingMode = .notRunning
        case .inactive, .active, .background:
            if holdingMode == .notRunning { holdingMode = .live }
        }
    }

    /// The resume point of BEHAVIOUR.md §1: one merged notification per kind (per
    /// subject), in first-held order, before anything else of the app.
    func deliverHeldNotifications() {
        holdingMode = .live
        // The table keeps the flush as plain entries in storage it reuses,
        // so a warm flush allocates nothing. Each notification is made right
        // before its delivery; subjects back at their default are freed
        // after all. No flush can start meanwhile: observers' inputs wait
        // until this busy section ends.
        let count = table.flush()
        for index in 0..<count where state.runsAppCode { deliver(table.flushedNotification(index)) }
        if table.finishFlush() {
            // A burst of subjects came and went: its storage is given back
            // once no new burst has come for a while (each flush like this
            // one pushes the deadline back), so a burst that recurs does not
            // regrow the storage every time.
            storageTimer.schedule(after: Self.storageGiveBackDelay)
        }
    }

    /// How long after a flush that left the subject storage mostly free
    /// the storage is given back.
    static var storageGiveBackDelay: Duration { .seconds(5) }

    /// Gives the storage of a burst of subjects back (`storageTimer`): the
    /// table compacts and shrinks it, then glibc is asked to return the
    /// freed pages, since a million small blocks (names, details) stay
    /// resident in its heap until trimmed (`compare --probe-flush-memory
    /// 1000000` shows the resident set with and without the trim).
    func giveBackEngineStorage() {
        if table.giveBackStorage() { _ = CLinux_malloc_trim() }
    }

    /// Carries out what recording an event decided: a live change reaches
    /// the observers (the notification is made only then).
    @inline(__always)
    func apply(_ outcome: RecordOutcome) {
        guard outcome.effect == .live else { return }
        if outcome.isPlain {
            // Built here with no details, so delivering it counts no reference.
            deliver(SystemNotification(slot: Int(outcome.event.slot), merged: 1, encoded: outcome.event.value, details: nil))
        } else {
            // Outlined, and given only the event: a whole outcome passed on
            // was copied to the stack on every event, plain ones included.
            deliverRichLive(outcome.event)
        }
    }

    /// Hands a notification to the observers of its kind, then to those of
    /// every kind, in registration order. Always called inside a busy
    /// section (an input being applied, or a transition's flush), so inputs
    /// the observers issue wait until it ends.
    @inline(__always)
    func deliver(_ notification: SystemNotification) {
        assert(activity.isBusy, "deliver outside a busy section of the engine")
        observers.deliver(notification)
    }

    /// Records a system event from the loop-thread API, after every input
    /// that arrived before it.
    /// - Throws: ``/SystemNotifications/NotificationCenterError`` for an event the engine refuses
    ///   (checked at once even when the event waits behind others),
    ///   ``/MainLoop/MainLoopError/shutDown`` after the loop was shut down.
    func postSystemEvent(_ event: SystemEvent) throws {
        loop.preconditionInLoop()
        guard !activity.isBusy, !inbox.hasPendingEvents else {
            try table.validate(event)
            try queueInLoop(.system(event))
            return
        }
        enterEngine()
        defer { leaveEngine() }
        let outcome = try table.record(event, mode: holdingMode)
        if hasInputObservers { noteInput(.system(event)) }
        apply(outcome)
    }

    /// The hot path: a prepared event from the loop thread.
    @usableFromInline
    func postPrepared(_ event: PreparedEvent) throws {
        loop.preconditionInLoop()
        guard !activity.isBusy, !inbox.hasPendingEvents else {
            try queueInLoop(.prepared(event))
            return
        }
        // Observed, in a function of its own: the event must outlive the
        // record for the observers, which kept it in registers the fast
        // path needs (+11 instructions a held event, probe `held`).
        if hasInputObservers { return try postPreparedObserved(event) }
        try recordPrepared(event, observed: false)
    }

    /// ``postPrepared(_:)`` with input observers: they see the event once
    /// the engine accepted it, before it changes anything.
    @inline(never)
    func postPreparedObserved(_ event: PreparedEvent) throws {
        try recordPrepared(event, observed: true)
    }

    /// Records a prepared event from an idle engine and applies the outcome.
    @inline(__always)
    private func recordPrepared(_ event: PreparedEvent, observed: Bool) throws {
        activity.enterFromIdle()  // enterEngine() from an idle engine (checked by the caller)
        let outcome: RecordOutcome
        do {
            outcome = try table.record(event, mode: holdingMode)
        } catch {
            leaveEngineToIdle()
            throw error
        }
        if observed { notePrepared(event) }
        apply(outcome)
        leaveEngineToIdle()
    }

    /// A live change whose notification has details (a keyed or custom
    /// kind): made, delivered, then finished.
    @inline(never)
    func deliverRichLive(_ event: PreparedEvent) {
        let outcome = RecordOutcome(.live, event)
        deliver(table.liveNotification(outcome))
        table.finishLive(outcome)
    }

    /// Leaves the busy section a hot path entered with `enterFromIdle()`.
    @inline(__always)
    func leaveEngineToIdle() {
        if activity.leaveToIdle() { applyPendingInputs() }
        if scheduledWorkAwaitsConditions { scheduledWorkConditionsMayHaveChanged() }
    }
}
