/// Releasing loop-bound objects from any thread.
///
/// Sources, timers and channels are loop-thread state, but the objects that
/// own them (a file watcher, a socket server, an application) may be
/// released on any thread, e.g. by a task that held the last reference.
/// Their deinits hand what they own to ``releaseOnLoop(_:_:)``, which frees
/// it on the loop thread; their handlers capture them weakly, so an event
/// that arrives in between finds nobody and does nothing.
extension MainRunLoop {
    /// Runs `release(resources)` on the loop thread: at once when called
    /// there (or when the loop is shut down: its sources are released
    /// already, and what is left, like closing a descriptor, is safe
    /// anywhere), else as app-priority work as soon as the loop runs.
    ///
    /// `resources` is touched only by `release`, on the loop thread; that
    /// is the rule that makes handing it across threads safe.
    public func releaseOnLoop<Resources>(_ resources: Resources, _ release: @escaping (Resources) -> Void) {
        if inLoop || isShutDown { return release(resources) }
        let handoff = LoopBound(handingOver: (resources, release), to: self)
        do {
            try execute { handoff.value.1(handoff.value.0) }
        } catch {
            // Shut down meanwhile: nothing runs on the loop any more.
            let (resources, release) = handoff.valueAfterShutdown
            release(resources)
        }
    }
}

extension FileDescriptorSource {
    /// Stops watching unless already removed (by ``remove()`` or the loop's
    /// shutdown): idempotent, for cleanup code.
    public func removeIfNeeded() {
        guard !isRemoved else { return }
        core.preconditionInLoop()
        releaseLoopResources()
        core.unregister(self)
    }
}

/// Lets a weakly owned source's handler remove that source (which exists
/// only after the handler was made) once its owner is gone.
final class OrphanedSourceRemover {
    weak var source: FileDescriptorSource?

    func removeSource() { source?.removeIfNeeded() }
}
