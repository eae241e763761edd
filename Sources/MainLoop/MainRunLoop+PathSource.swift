extension MainRunLoop {
    /// Calls `handler` on the loop thread for each change to `path` that
    /// `events` asks for (see ``PathSource`` for what is watched and how).
    /// One inotify descriptor serves every path source of a priority.
    /// - Throws: ``MainLoopError/system(operation:errno:)`` when no directory
    ///   on the way to `path` can be watched (permission denied, the user's
    ///   inotify watch limit), ``MainLoopError/invalidArgument(_:)`` for an
    ///   empty path.
    /// - Precondition: called on the loop thread.
    public func addPath(_ path: String, events: PathEvents = .all, priority: LoopPriority = .app,
                        handler: @escaping (PathEvent) -> Void) throws(MainLoopError) -> PathSource {
        preconditionInLoop()
        guard !core.isShutDown else { throw .shutDown }
        let hub: PathWatchHub
        if let existing = core.pathHubs[priority.rawValue] {
            hub = existing
        } else {
            hub = try PathWatchHub(core: core, priority: priority)
            core.pathHubs[priority.rawValue] = hub
            core.registered[ObjectIdentifier(hub)] = hub
        }
        let source = try PathSource(core: core, hub: hub, path: path, events: events, handler: handler)
        core.registered[ObjectIdentifier(source)] = source
        return source
    }
}
