import CLinux
import Glibc

extension MainRunLoop {
    /// Calls `handler` once, on the loop thread, when child process `pid`
    /// ends, with how it ended; the loop reaps that child (and no other).
    /// See ``ChildProcessSource``.
    /// - Throws: ``MainLoopError/notChildProcess(pid:)`` for a process that
    ///   is not a child of this one (or was already reaped),
    ///   ``MainLoopError/invalidArgument(_:)`` for a pid that is not
    ///   positive, ``MainLoopError/system(operation:errno:)`` when the
    ///   kernel has no pidfds (before Linux 5.3) or no descriptor is left.
    /// - Precondition: called on the loop thread.
    public func addChildProcess(pid: pid_t, priority: LoopPriority = .app,
                                handler: @escaping (ChildProcessTermination) -> Void) throws(MainLoopError) -> ChildProcessSource {
        preconditionInLoop()
        guard !core.isShutDown else { throw .shutDown }
        let source = try ChildProcessSource(core: core, pid: pid, priority: priority, handler: handler)
        core.registered[ObjectIdentifier(source)] = source
        return source
    }

    /// Starts `executable` as a child process (`posix_spawn`) and watches
    /// it: ``addChildProcess(pid:priority:handler:)`` in one call.
    ///
    /// The child starts with no signal blocked and every signal at its
    /// default action, whatever this thread blocks, and with its three
    /// standard streams as its only descriptors: everything else is closed
    /// in the child, close-on-exec or not (a pipe's write end inherited by
    /// a child would keep the pipe's reader from ever seeing its end).
    ///
    /// - Parameters:
    ///   - executable: a path, or a name looked up in `PATH` (no `/`).
    ///   - arguments: the arguments after the program name (`argv[1...]`).
    ///   - environment: the child's environment; nil inherits this process's.
    ///   - workingDirectory: where the child starts; nil: this process's.
    ///   - standardInput: the descriptor the child reads as its stdin; nil inherits.
    ///   - standardOutput: the descriptor the child writes as its stdout; nil inherits.
    ///   - standardError: the descriptor the child writes as its stderr; nil inherits.
    ///   - priority: the priority the handler runs at.
    ///   - handler: called once, with how the child ended.
    /// - Throws: ``MainLoopError/system(operation:errno:)`` naming the
    ///   executable when it cannot be started (`ENOENT`, `EACCES`, a missing
    ///   working directory); the errors of `addChildProcess`.
    /// - Precondition: called on the loop thread.
    public func spawnChildProcess(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, standardInput: Int32? = nil, standardOutput: Int32? = nil,
        standardError: Int32? = nil, priority: LoopPriority = .app,
        handler: @escaping (ChildProcessTermination) -> Void
    ) throws(MainLoopError) -> ChildProcessSource {
        preconditionInLoop()
        guard !core.isShutDown else { throw .shutDown }
        guard !executable.isEmpty else { throw .invalidArgument("the executable to spawn has an empty name") }
        for text in [executable] + arguments + (environment.map { Array($0.keys) + Array($0.values) } ?? [])
            where text.utf8.contains(0) {
            throw .invalidArgument("an argument or environment entry of \(executable) contains a NUL byte")
        }
        let argv = [executable] + arguments
        let envp = environment.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }
        var pid: pid_t = 0
        let result = withCStrings(argv) { argvPointers in
            withOptionalCStrings(envp) { envPointers in
                withOptionalCString(workingDirectory) { directory in
                    CLinux_spawn(executable, argvPointers, envPointers ?? UnsafePointer(environ), directory,
                                 standardInput ?? -1, standardOutput ?? -1, standardError ?? -1,
                                 executable.contains("/") ? 0 : 1, &pid)
                }
            }
        }
        guard result == 0 else { throw .system(operation: "posix_spawn \(executable)", errno: result) }
        // The child is ours and unreaped until its source reaps it, so the
        // pid cannot be reused in between.
        return try addChildProcess(pid: pid, priority: priority, handler: handler)
    }
}

/// `strings` as a NULL-terminated C array, valid inside `body`.
private func withCStrings<Result>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result) -> Result {
    let copies = strings.map { strdup($0) } + [nil]
    defer { copies.forEach { free($0) } }
    return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
}

private func withOptionalCStrings<Result>(_ strings: [String]?,
                                          _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> Result) -> Result {
    guard let strings else { return body(nil) }
    return withCStrings(strings) { body($0) }
}

private func withOptionalCString<Result>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
