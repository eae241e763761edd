import MainLoop

extension Application {
    /// Background time left while in background (never negative), or nil
    /// while not in background, where background time does not count.
    public var remainingBackgroundTime: Duration? {
        guard state == .background, let start = backgroundStart else { return nil }
        let left = (start + configuration.backgroundTaskLimit) - loop.now
        return left > .zero ? left : .zero
    }

    /// Begins a background task. Its `expirationHandler` runs once at
    /// `backgroundTaskLimit - expirationLead` if the task is still open; end
    /// the task there or the app is killed at the limit.
    ///
    /// - Returns: a unique token, or ``BackgroundTaskToken/invalid`` when
    ///   background time has run out.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code.
    public func beginBackgroundTask(name: String, expirationHandler: (() -> Void)? = nil)
        throws(LifecycleError) -> BackgroundTaskToken {
        loop.preconditionInLoop()
        try requireAppCode("beginBackgroundTask")
        if remainingBackgroundTime == .zero { return .invalid }
        let token = BackgroundTaskToken(rawValue: nextTaskNumber)
        nextTaskNumber += 1
        // "A task begun after the expiration handlers ran gets no handler of
        // its own" (SPEC §5): it is killed at the limit if still open.
        let lateInBackground = state == .background && expirationHandlersRan
        tasks[token] = BackgroundTask(name: name, expirationHandler: lateInBackground ? nil : expirationHandler,
                                      handlerRan: lateInBackground)
        taskOrder.append(token)
        return token
    }

    /// Ends a background task. A background app with nothing else keeping
    /// it running is suspended right away.
    /// - Throws: ``LifecycleError/unknownBackgroundTask(_:)`` for a token
    ///   that is unknown or already ended; nothing changes then.
    public func endBackgroundTask(_ token: BackgroundTaskToken) throws(LifecycleError) {
        loop.preconditionInLoop()
        guard tasks.removeValue(forKey: token) != nil else { throw .unknownBackgroundTask(token) }
        taskOrder.removeAll { $0 == token }
        suspendIfIdle()
    }

    /// The names of the open background tasks, in begin order.
    public var openBackgroundTaskNames: [String] { taskOrder.compactMap { tasks[$0]?.name } }

    func requireAppCode(_ action: String) throws(LifecycleError) {
        guard state.runsAppCode else { throw .appNotRunning(action: action, state: state) }
    }

    /// Background time starts: the expiration and kill deadlines are
    /// scheduled now, so at equal instants they run in this order.
    func startBackgroundTime() {
        backgroundStart = loop.now
        expirationHandlersRan = false
        let limit = configuration.backgroundTaskLimit
        expirationTimer.schedule(after: max(.zero, limit - configuration.expirationLead))
        backgroundLimitTimer.schedule(after: limit)
    }

    func stopBackgroundTime() {
        backgroundStart = nil
        expirationTimer.cancel()
        backgroundLimitTimer.cancel()
    }

    /// At limit − lead: every open task's handler runs once, in begin order.
    func runExpirationHandlers() {
        expirationHandlersRan = true
        for token in taskOrder {
            guard state == .background, var task = tasks[token], !task.handlerRan else { continue }
            task.handlerRan = true
            tasks[token] = task
            task.expirationHandler?()
        }
        suspendIfIdle()
    }

    /// At the limit: a task still open kills the app.
    func backgroundTimeLimitReached() {
        guard state == .background, !tasks.isEmpty else { return }
        kill(.backgroundTimeExceeded)
    }
}
