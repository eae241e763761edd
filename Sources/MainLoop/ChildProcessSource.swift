import CLinux
import Glibc

/// How a child process ended, as `waitid` reports it.
public enum ChildProcessTermination: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// It exited with `code` (0 to 255).
    case exited(code: Int32)
    /// A signal ended it; `coreDumped` when it left a core dump.
    case killed(signal: Int32, coreDumped: Bool)

    /// Whether it exited with code 0.
    public var isSuccess: Bool { self == .exited(code: 0) }

    /// "exited with code 3", "killed by signal 9 (Killed)".
    public var description: String {
        switch self {
        case .exited(let code): return "exited with code \(code)"
        case .killed(let signal, let coreDumped):
            return "killed by signal \(signal) (\(String(cString: strsignal(signal))))" + (coreDumped ? ", core dumped" : "")
        }
    }
}

/// Watches one child process through its pidfd: the handler runs once, on
/// the loop thread, with how the child ended, and the loop reaps exactly
/// that child (`waitid(P_PIDFD)`). No SIGCHLD handler, no reaping of
/// anyone else's children: other code that waits for its own children is
/// unaffected (code that reaps every child, `waitpid(-1)`, would take this
/// one too; then the handler never runs).
///
/// Created with ``MainRunLoop/addChildProcess(pid:priority:handler:)`` or
/// ``MainRunLoop/spawnChildProcess(executable:arguments:environment:workingDirectory:standardInput:standardOutput:standardError:priority:handler:)``.
/// Removing the source stops watching without reaping: the child is
/// still this process's to wait for. Loop thread only.
public final class ChildProcessSource: LoopRegistered {
    /// The child's process id.
    public let pid: pid_t
    /// Whether it was removed: by ``remove()``, after the handler ran, or
    /// at shutdown.
    public private(set) var isRemoved = false
    /// How the child ended, once the handler has been called.
    public private(set) var termination: ChildProcessTermination?

    private let core: LoopCore
    private var pidfd: Int32
    private var readable: FileDescriptorSource?
    private let handler: (ChildProcessTermination) -> Void

    init(core: LoopCore, pid: pid_t, priority: LoopPriority,
         handler: @escaping (ChildProcessTermination) -> Void) throws(MainLoopError) {
        guard pid > 0 else { throw .invalidArgument("a child process id must be positive, not \(pid)") }
        self.core = core
        self.pid = pid
        self.handler = handler
        pidfd = CLinux_pidfd_open(pid)
        guard pidfd >= 0 else {
            if errno == ESRCH { throw .notChildProcess(pid: pid) }
            if errno == ENOSYS { throw .system(operation: "pidfd_open (watching a child needs Linux 5.3 or later)", errno: ENOSYS) }
            throw systemError("pidfd_open(\(pid))")
        }
        // Not ours to wait for (someone else's process, or already reaped):
        // say so now rather than never calling the handler.
        var how: Int32 = 0, status: Int32 = 0
        if CLinux_pidfd_wait(pidfd, 1, &how, &status) < 0 {
            let error: MainLoopError = errno == ECHILD ? .notChildProcess(pid: pid) : systemError("waitid(P_PIDFD, \(pid))")
            close(pidfd)
            throw error
        }
        do throws(MainLoopError) {
            let source = try FileDescriptorSource(core: core, fileDescriptor: pidfd, interest: .read,
                                                  priority: priority) { [unowned self] _ in childEnded() }
            source.kind = .childProcess
            readable = source
        } catch {
            close(pidfd)
            throw error
        }
    }

    /// Stops watching; the child is not reaped (it is still this process's
    /// to wait for).
    /// - Throws: ``MainLoopError/sourceRemoved`` when already removed or ended.
    public func remove() throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        releaseLoopResources()
        core.unregister(self)
    }

    /// The pidfd became readable: the child ended. Reaps it and calls the
    /// handler once.
    private func childEnded() {
        var how: Int32 = 0, status: Int32 = 0
        let result = CLinux_pidfd_wait(pidfd, 0, &how, &status)
        // 0: a spurious readiness, the child still runs; -1: someone else
        // reaped it (waitpid(-1) elsewhere), there is nothing left to learn.
        guard result != 0 else { return }
        let ended: ChildProcessTermination? = result < 0 ? nil
            : how == CLinux_child_exited ? .exited(code: status)
            : .killed(signal: status, coreDumped: how == CLinux_child_dumped)
        releaseLoopResources()
        core.unregister(self)
        guard let ended else { return }
        termination = ended
        core.workCounter &+= 1
        handler(ended)
    }

    func releaseLoopResources() {
        guard !isRemoved else { return }
        isRemoved = true
        // The descriptor source stays allocated (its callback may be the one
        // running): it is freed with this source, which the loop keeps
        // until the current callback is over.
        readable?.releaseLoopResources()
        close(pidfd)
        pidfd = -1
    }
}

@available(*, unavailable)
extension ChildProcessSource: Sendable {}
