import MainLoop

extension Application {
    /// Starts a declared background service; while any runs, a background
    /// app is not suspended. Starting a running service is a no-op.
    /// - Throws: ``LifecycleError/undeclaredBackgroundMode(_:)`` for a mode
    ///   not declared in the configuration, or
    ///   ``LifecycleError/appNotRunning(action:state:)``.
    public func startService(_ mode: BackgroundMode) throws(LifecycleError) {
        let run = try requireAppCode("startService")
        guard configuration.backgroundModes.contains(mode) else { throw .undeclaredBackgroundMode(mode) }
        run.services.insert(mode)
    }

    /// Stops a service; stopping one that is not running is a no-op. When
    /// the last one stops, a background app with no open task is suspended.
    public func stopService(_ mode: BackgroundMode) throws(LifecycleError) {
        let run = try requireAppCode("stopService")
        guard run.services.remove(mode) != nil else { return }
        suspendIfIdle()
    }

    /// The services running now.
    public var services: Set<BackgroundMode> { currentRun?.services ?? [] }

    /// Sets the voip keep-alive: every `timeout` from now, a suspended app
    /// is woken (as `wake` does) to run `handler`, then suspended again; a
    /// running background app just runs it; a foreground app is not called
    /// and the schedule goes on. Setting it again replaces the previous one;
    /// a kill clears it.
    /// - Throws: ``LifecycleError/undeclaredBackgroundMode(_:)`` without the
    ///   voip mode, ``LifecycleError/keepAliveTimeoutTooShort(requested:minimum:)``
    ///   below the minimum, ``LifecycleError/appNotRunning(action:state:)``.
    public func setKeepAliveTimeout(_ timeout: Duration, handler: @escaping () -> Void) throws(LifecycleError) {
        let run = try requireAppCode("setKeepAliveTimeout")
        guard configuration.backgroundModes.contains(.voip) else { throw .undeclaredBackgroundMode(.voip) }
        guard timeout >= configuration.minimumKeepAliveTimeout else {
            throw .keepAliveTimeoutTooShort(requested: timeout, minimum: configuration.minimumKeepAliveTimeout)
        }
        run.keepAliveHandler = handler
        keepAliveTimer.schedule(after: timeout, repeating: timeout)
    }

    /// Removes the keep-alive handler.
    public func clearKeepAliveTimeout() {
        loop.preconditionInLoop()
        currentRun?.keepAliveHandler = nil
        keepAliveTimer.cancel()
    }

    func keepAliveFired() {
        switch state {
        case .suspended:
            if let steps = machine.planKeepAliveWake() { runTransition(steps) }
        case .background:
            enterEngine()
            defer { leaveEngine() }
            runKeepAliveHandler()
        case .notRunning, .inactive, .active:
            return
        }
    }

    /// Runs the handler under its limit; overrunning it gets the app
    /// suspended again at once (BEHAVIOUR.md §2): the system ends its open tasks and
    /// services, which no longer keep it running.
    func runKeepAliveHandler() {
        guard state == .background, let run = currentRun, let handler = run.keepAliveHandler else { return }
        let outcome = loop.runWatched(limit: configuration.keepAliveHandlerLimit, handler)
        guard case .overran = outcome, state == .background, currentRun === run else { return }
        run.tasks.removeAll()
        run.services.removeAll()
        suspendIfIdle()
    }
}
