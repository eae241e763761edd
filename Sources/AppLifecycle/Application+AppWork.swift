import MainLoop

extension Application {
    /// Schedules an app timer (see ``AppTimer`` for its suspension rules).
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code.
    @discardableResult
    public func scheduleTimer(after delay: Duration, repeating interval: Duration? = nil,
                              _ handler: @escaping () -> Void) throws(LifecycleError) -> AppTimer {
        let run = try requireAppCode("timer")
        let timer = AppTimer(application: self, run: run, after: delay, repeating: interval, handler: handler)
        run.timers[ObjectIdentifier(timer)] = timer
        return timer
    }

    /// Posts app work to the loop; it runs in post order after anything
    /// already due. Work dequeued while the app is suspended waits for the
    /// resume (after missed timers); work left when the app dies is dropped
    /// and counted in ``droppedAppWorkCount``.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code, ``/MainLoop/MainLoopError/shutDown`` after shutdown.
    public func post(_ work: @escaping () -> Void) throws {
        let run = try requireAppCode("post")
        try loop.executeInLoop { [weak self, weak run] in
            guard let self else { return }
            guard let run, self.currentRun === run else {
                self.droppedAppWorkCount += 1
                return
            }
            if self.state.runsAppCode { work() } else { run.deferWork(work) }
        }
    }

    /// Watches an fd for the app; parked while suspended (see
    /// ``AppFileDescriptorSource``).
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code; ``/MainLoop/MainLoopError`` from the loop.
    public func addFileDescriptor(_ fileDescriptor: Int32, interest: Readiness,
                                  handler: @escaping (Readiness) -> Void) throws -> AppFileDescriptorSource {
        let run = try requireAppCode("addFileDescriptor")
        let source = try loop.addFileDescriptor(fileDescriptor, interest: interest, priority: .app, handler: handler)
        let appSource = AppFileDescriptorSource(application: self, source: source, interest: interest)
        run.sources[ObjectIdentifier(appSource)] = appSource
        return appSource
    }

    /// After a resume: timers that came due while suspended, in the order
    /// of their first missed due time (the loop heap's (deadline, FIFO)
    /// order), then work deferred while suspended.
    func runMissedAppWork() {
        guard let run = currentRun else { return }
        let timers = run.missedTimers
        run.missedTimers.removeAll()
        for timer in timers where state.runsAppCode && currentRun === run { timer.fireMissed() }
        // In order, including work these add; stops when the app stops
        // running code (what is left stays queued, or is counted as lost by a kill).
        while state.runsAppCode, currentRun === run, let work = run.takeDeferredWork() { work() }
        releaseMainQueueAfterResume()
    }

    func pauseAppSources() {
        for source in currentRun?.sources.values ?? [:].values {
            if let error = source.park() { emit(.appSourceFailed(fileDescriptor: source.fileDescriptor, error: error)) }
        }
        for source in currentRun?.pathSources ?? [] { source.setHolding(true) }
    }

    func resumeAppSources() {
        for source in currentRun?.sources.values ?? [:].values {
            if let error = source.resume() { emit(.appSourceFailed(fileDescriptor: source.fileDescriptor, error: error)) }
        }
        for source in currentRun?.pathSources ?? [] { source.setHolding(false) }
    }
}
