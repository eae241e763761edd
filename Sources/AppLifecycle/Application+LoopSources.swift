import Glibc
import MainLoop

/// The loop's idle work, child processes and path watches as app code:
/// what they run obeys the app's state, like app timers and fd sources
/// (BEHAVIOUR.md §10).
extension Application {
    /// Runs `work` once when the loop is idle, as app work: deferred to the
    /// resume while the app is suspended, dropped if the app's run ends first.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code; ``/MainLoop/MainLoopError`` from the loop.
    @discardableResult
    public func executeWhenIdle(_ work: @escaping () -> Void) throws -> IdleSource {
        _ = try requireAppCode("executeWhenIdle")
        let gate = AppWorkGate(self)
        return try loop.executeWhenIdle { gate.run(work) }
    }

    /// Runs `handler` each time the loop is idle while the app runs code
    /// (not while it is suspended: an idle pass is about now, so none is
    /// saved for later); removed when the app's run ends.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code; ``/MainLoop/MainLoopError`` from the loop.
    @discardableResult
    public func addIdle(handler: @escaping () -> Void) throws -> IdleSource {
        let run = try requireAppCode("addIdle")
        let source = try loop.addIdle { [weak self, weak run] in
            guard let self, let run, self.currentRun === run, self.state.runsAppCode else { return }
            handler()
        }
        run.idleSources.append(source)
        return source
    }

    /// Watches child `pid` (``/MainLoop/MainRunLoop/addChildProcess(pid:priority:handler:)``);
    /// the loop reaps it when it ends, and `handler` runs as app work (at
    /// the resume if the app is suspended then).
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code; ``/MainLoop/MainLoopError`` from the loop.
    public func addChildProcess(pid: pid_t, handler: @escaping (ChildProcessTermination) -> Void) throws -> ChildProcessSource {
        _ = try requireAppCode("addChildProcess")
        let gate = AppWorkGate(self)
        return try loop.addChildProcess(pid: pid) { end in gate.run { handler(end) } }
    }

    /// Starts and watches a child process as app code (see
    /// ``/MainLoop/MainRunLoop/spawnChildProcess(executable:arguments:environment:workingDirectory:standardInput:standardOutput:standardError:priority:handler:)``
    /// for the parameters, ``addChildProcess(pid:handler:)`` for the handler).
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code; ``/MainLoop/MainLoopError`` from the loop.
    public func spawnChildProcess(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, standardInput: Int32? = nil, standardOutput: Int32? = nil,
        standardError: Int32? = nil, handler: @escaping (ChildProcessTermination) -> Void
    ) throws -> ChildProcessSource {
        _ = try requireAppCode("spawnChildProcess")
        let gate = AppWorkGate(self)
        return try loop.spawnChildProcess(executable: executable, arguments: arguments, environment: environment,
                                          workingDirectory: workingDirectory, standardInput: standardInput,
                                          standardOutput: standardOutput, standardError: standardError) { end in
            gate.run { handler(end) }
        }
    }

    /// Watches `path` for the app (``/MainLoop/MainRunLoop/addPath(_:events:priority:handler:)``):
    /// held while the app is suspended (changes merged, bounded) and
    /// delivered at the resume; removed when the app's run ends.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code; ``/MainLoop/MainLoopError`` from the loop.
    public func addPath(_ path: String, events: PathEvents = .all,
                        handler: @escaping (PathEvent) -> Void) throws -> PathSource {
        let run = try requireAppCode("addPath")
        let source = try loop.addPath(path, events: events, priority: .app, handler: handler)
        run.pathSources.append(source)
        return source
    }
}
