extension MainRunLoop {
    /// Calls `handler` at each of `activities` (CFRunLoop's observer points:
    /// see ``LoopActivity``), on the loop thread, in the order observers
    /// were added. Before-waiting is where batched output is flushed and
    /// another loop is given its turn; after-waiting runs before the first
    /// callback of what woke the loop.
    ///
    /// - Parameters:
    ///   - activities: the points to be called at.
    ///   - repeats: false removes the observer after its first call.
    ///   - handler: called with the activity.
    /// - Throws: ``MainLoopError/shutDown`` after shutdown.
    /// - Precondition: called on the loop thread.
    @discardableResult
    public func addObserver(activities: LoopActivity, repeats: Bool = true,
                            handler: @escaping (LoopActivity) -> Void) throws(MainLoopError) -> LoopObserver {
        preconditionInLoop()
        guard !core.isShutDown else { throw .shutDown }
        return core.hooks().addObserver(activities: activities, repeats: repeats, handler: handler)
    }

    /// Runs `handler` each time the loop has nothing else ready and is
    /// about to wait: after every priority's work, in the order idle
    /// handlers were added. It never keeps the loop awake by itself: with
    /// nothing else happening the loop blocks (no CPU used) after one run.
    /// - Throws: ``MainLoopError/shutDown`` after shutdown.
    /// - Precondition: called on the loop thread.
    @discardableResult
    public func addIdle(handler: @escaping () -> Void) throws(MainLoopError) -> IdleSource {
        preconditionInLoop()
        guard !core.isShutDown else { throw .shutDown }
        return core.hooks().addIdle(repeats: true, handler: handler)
    }

    /// Runs `work` once, the next time the loop has nothing else ready
    /// (see ``addIdle(handler:)``).
    /// - Throws: ``MainLoopError/shutDown`` after shutdown.
    /// - Precondition: called on the loop thread.
    @discardableResult
    public func executeWhenIdle(_ work: @escaping () -> Void) throws(MainLoopError) -> IdleSource {
        preconditionInLoop()
        guard !core.isShutDown else { throw .shutDown }
        return core.hooks().addIdle(repeats: false, handler: work)
    }

    /// Runs `work` once when ``run()`` is asked to stop (or a deterministic
    /// ``advance(to:)`` takes a stop request), before it returns. Exit
    /// handlers run by `priority` (system first), then in the order added;
    /// the work each one posts runs before the next; a `stop()` during the
    /// exit work changes nothing.
    /// - Throws: ``MainLoopError/shutDown`` after shutdown.
    /// - Precondition: called on the loop thread.
    @discardableResult
    public func addExitHandler(priority: LoopPriority = .app,
                               _ work: @escaping () -> Void) throws(MainLoopError) -> ExitHandler {
        preconditionInLoop()
        guard !core.isShutDown else { throw .shutDown }
        return core.hooks().addExitHandler(priority: priority, handler: work)
    }
}
