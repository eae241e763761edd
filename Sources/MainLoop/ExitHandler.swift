/// Work that runs once when ``MainRunLoop/run()`` is asked to stop, before
/// it returns: exit handlers run by priority (system first), then in the
/// order added, as sd-event orders its exit sources; work they post still
/// runs before `run()` returns. Created with
/// ``MainRunLoop/addExitHandler(priority:_:)``. Loop thread only.
public final class ExitHandler {
    /// Where it runs among the exit handlers.
    public let priority: LoopPriority
    /// Whether it was removed (by ``remove()``, after its run, or at shutdown).
    public private(set) var isRemoved = false

    let handler: () -> Void
    /// The order it was added in, among all exit handlers of the loop.
    let sequence: UInt64
    /// Held strongly; the loop's shutdown empties the hooks, which ends the cycle.
    private let hooks: LoopPassHooks

    init(priority: LoopPriority, sequence: UInt64, hooks: LoopPassHooks, handler: @escaping () -> Void) {
        self.priority = priority
        self.sequence = sequence
        self.hooks = hooks
        self.handler = handler
    }

    /// Cancels it; it will not run.
    /// - Throws: ``MainLoopError/sourceRemoved`` when already removed or run.
    public func remove() throws(MainLoopError) {
        hooks.core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        markRemoved()
    }

    func markRemoved() { isRemoved = true }
}

@available(*, unavailable)
extension ExitHandler: Sendable {}
