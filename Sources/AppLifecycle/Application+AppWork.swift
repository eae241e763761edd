import MainLoop

extension Application {
    /// Schedules an app timer (see ``AppTimer`` for its suspension rules).
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code.
    @discardableResult
    public func scheduleTimer(after delay: Duration, repeating interval: Duration? = nil,
                              _ handler: @escaping () -> Void) throws(LifecycleError) -> AppTimer {
        loop.preconditionInLoop()
        try requireAppCode("timer")
        let timer = AppTimer(application: self, after: delay, repeating: interval, handler: handler)
        appTimers[ObjectIdentifier(timer)] = timer
        return timer
    }

    /// Posts app work to the loop; it runs in post order after anything
    /// already due. Work dequeued while the app is suspended waits for the
    /// resume (after missed timers); work left when the app dies is dropped
    /// and counted in ``droppedAppWorkCount``.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code.
    public func post(_ work: @escaping () -> Void) throws(LifecycleError) {
        loop.preconditionInLoop()
        try requireAppCode("post")
        let generation = appGeneration
        let gate = self.gate
        do {
            try loop.executeInLoop {
                guard let application = gate.application else { return }
                guard generation == application.appGeneration else { application.countDropped(); return }
                if application.state.runsAppCode { work() } else { application.deferredWork.append(work) }
            }
        } catch {
            countDropped()
        }
    }

    /// How much posted app work was dropped because the app died first.
    public var droppedAppWorkCount: Int { droppedAppWork }

    /// Watches an fd for the app; parked while suspended (see
    /// ``AppFileDescriptorSource``).
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code; loop errors are rethrown as preconditions.
    public func addFileDescriptor(_ fileDescriptor: Int32, interest: Readiness,
                                  handler: @escaping (Readiness) -> Void) throws -> AppFileDescriptorSource {
        loop.preconditionInLoop()
        try requireAppCode("addFileDescriptor")
        let source = try loop.addFileDescriptor(fileDescriptor, interest: interest, priority: .app, handler: handler)
        let appSource = AppFileDescriptorSource(application: self, source: source, interest: interest)
        appSources[ObjectIdentifier(appSource)] = appSource
        return appSource
    }

    func forget(_ timer: AppTimer) {
        appTimers[ObjectIdentifier(timer)] = nil
        missedTimers.removeAll { $0 === timer }
    }

    func forget(_ source: AppFileDescriptorSource) {
        appSources[ObjectIdentifier(source)] = nil
    }

    /// After a resume: timers that came due while suspended, in the order
    /// of their first missed due time (the order they came due in, which is
    /// the loop heap's (deadline, FIFO) order), then work deferred while
    /// suspended.
    func runMissedAppWork() {
        let timers = missedTimers
        missedTimers.removeAll()
        for timer in timers where state.runsAppCode { timer.fireMissed() }
        while state.runsAppCode, !deferredWork.isEmpty {
            deferredWork.removeFirst()()
        }
    }

    func cancelAllAppTimers() {
        for timer in appTimers.values { timer.cancelForKill() }
        missedTimers.removeAll()
        appTimers.removeAll()
        appGeneration &+= 1
    }

    func pauseAppSources() { for source in appSources.values { source.park() } }
    func resumeAppSources() { for source in appSources.values { source.resume() } }

    func removeAllAppSources() {
        for source in appSources.values { source.removeForKill() }
        appSources.removeAll()
    }

    private func countDropped() { droppedAppWork += 1 }
}

/// Lets work queued on the loop reach its application without a `weak`
/// reference (which would give the application a refcount side table and
/// slow every retain of it). The application sets itself here in `init`
/// and clears it in `deinit`, so a nil application means "released".
final class AppGate {
    unowned(unsafe) var application: Application?
}
