/// Work that runs when the loop has nothing else ready: after every
/// priority's work, before the loop would block, in the order added.
///
/// Created with ``MainRunLoop/addIdle(handler:)`` (repeating: once each
/// time the loop is about to sleep) or ``MainRunLoop/executeWhenIdle(_:)``
/// (once). An idle handler never keeps the loop awake by itself: after the
/// handlers ran, the loop blocks until something else is ready (GLib's and
/// libuv's idle handles poll without blocking while installed; this one
/// does not, BEHAVIOUR.md §10). Loop thread only.
public final class IdleSource {
    /// Whether it runs every time the loop idles (false: once).
    public let repeats: Bool
    /// Whether it was removed (by ``remove()``, after its one run, or at
    /// shutdown). Read on every idle pass, hence unchecked (the idle pass
    /// row of `compare`).
    @exclusivity(unchecked) public private(set) var isRemoved = false

    let handler: () -> Void
    /// Held strongly; the loop's shutdown empties the hooks, which ends the cycle.
    private let hooks: LoopPassHooks

    init(repeats: Bool, hooks: LoopPassHooks, handler: @escaping () -> Void) {
        self.repeats = repeats
        self.hooks = hooks
        self.handler = handler
    }

    /// Stops it; removing it from its own handler is allowed.
    /// - Throws: ``MainLoopError/sourceRemoved`` when already removed.
    public func remove() throws(MainLoopError) {
        hooks.core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        markRemoved()
    }

    /// Stops it unless already removed: idempotent, for cleanup code.
    public func removeIfNeeded() {
        hooks.core.preconditionInLoop()
        markRemoved()
    }

    func markRemoved() {
        guard !isRemoved else { return }
        isRemoved = true
        hooks.idleSourceRemoved()
    }
}

@available(*, unavailable)
extension IdleSource: Sendable {}
