import MainLoop

extension Application {
    /// Background time left while in background (never negative), or nil
    /// while not in background, where background time does not count.
    public var remainingBackgroundTime: Duration? {
        guard state == .background, let period = currentRun?.background else { return nil }
        let left = (period.start + configuration.backgroundTaskLimit) - loop.now
        return left > .zero ? left : .zero
    }

    /// Begins a background task. Its `expirationHandler` runs once at
    /// `backgroundTaskLimit - expirationLead` if the task is still open; end
    /// the task there or the app is killed at the limit. A task begun after
    /// this background period's expiration instant gets no handler.
    ///
    /// - Returns: a unique token, or ``BackgroundTaskToken/invalid`` when
    ///   background time has run out.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code.
    public func beginBackgroundTask(name: String, expirationHandler: (() -> Void)? = nil)
        throws(LifecycleError) -> BackgroundTaskToken {
        let run = try requireAppCode("beginBackgroundTask")
        if remainingBackgroundTime == .zero { return .invalid }
        let token = BackgroundTaskToken(rawValue: nextTaskNumber)
        nextTaskNumber += 1
        // BEHAVIOUR.md §3: the expiration instant passes even with no task open; a
        // task begun after it in this period never gets a handler.
        let late = state == .background && run.background?.expirationPassed == true
        run.tasks.append(BackgroundTask(token: token, name: name, expirationHandler: late ? nil : expirationHandler,
                                        handlerRan: late))
        return token
    }

    /// Ends a background task. A background app with nothing else keeping
    /// it running is suspended right away.
    /// - Throws: ``LifecycleError/unknownBackgroundTask(_:)`` for a token
    ///   that is unknown, already ended, or from an earlier run of the app;
    ///   nothing changes then.
    public func endBackgroundTask(_ token: BackgroundTaskToken) throws(LifecycleError) {
        loop.preconditionInLoop()
        guard let run = currentRun, let index = run.taskIndex(token) else { throw .unknownBackgroundTask(token) }
        run.tasks.remove(at: index)
        suspendIfIdle()
    }

    /// The oldest open task begun with `name` in this run, if any.
    public func openBackgroundTask(named name: String) -> BackgroundTaskToken? {
        currentRun?.tasks.first { $0.name == name }?.token
    }

    /// The names of the open background tasks, in begin order.
    public var openBackgroundTaskNames: [String] { currentRun?.tasks.map(\.name) ?? [] }

    /// The current run, if the app runs code now.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` otherwise.
    @discardableResult
    func requireAppCode(_ action: String) throws(LifecycleError) -> AppRun {
        loop.preconditionInLoop()
        guard state.runsAppCode, let run = currentRun else { throw .appNotRunning(action: action, state: state) }
        return run
    }

    /// Background time starts: the expiration and kill deadlines are
    /// scheduled now, so at equal instants they run in this order.
    func startBackgroundTime() {
        currentRun?.background = BackgroundPeriod(start: loop.now)
        let limit = configuration.backgroundTaskLimit
        expirationTimer.schedule(after: max(.zero, limit - configuration.expirationLead))
        backgroundLimitTimer.schedule(after: limit)
    }

    func stopBackgroundTime() {
        currentRun?.background = nil
        expirationTimer.cancel()
        backgroundLimitTimer.cancel()
    }

    /// At limit − lead: every open task whose handler has not run gets it
    /// once, in begin order.
    func runExpirationHandlers() {
        guard let run = currentRun, state == .background else { return }
        run.background?.expirationPassed = true
        enterEngine()
        defer { leaveEngine() }
        for token in run.tasks.map(\.token) {
            // A handler may end tasks (or the app may have left background).
            guard state == .background, currentRun === run, let index = run.taskIndex(token),
                  !run.tasks[index].handlerRan else { continue }
            run.tasks[index].handlerRan = true
            run.tasks[index].expirationHandler?()
        }
        suspendIfIdle()
    }

    /// At the limit: a task still open kills the app.
    func backgroundTimeLimitReached() {
        guard state == .background, let run = currentRun, !run.tasks.isEmpty else { return }
        kill(.backgroundTimeExceeded)
    }
}
