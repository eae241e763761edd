import Glibc

/// Errors of a ``MainRunLoop`` and its sources, in three families (the
/// parts built on the loop have their own: the sockets' `SocketError`, the
/// application's `LifecycleError`, ...):
///
/// - **a system call failed**: ``system(operation:errno:)``, with the
///   operation and the kernel's `errno`;
/// - **an argument is out of range**: ``invalidArgument(_:)``;
/// - **the loop is used wrongly**: ``shutDown``, ``sourceRemoved``,
///   ``notDeterministic``, ``reentrantDispatch``, ``signalReserved(signal:owner:)``,
///   ``notChildProcess(pid:)``.
///
/// Every misuse the loop can detect at run time is reported with one of
/// these, never by crashing silently. (Calling a loop-only method from
/// another thread is a programming error and fails a precondition instead;
/// see ``MainRunLoop/preconditionInLoop(function:file:line:)``.)
public enum MainLoopError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The loop was shut down; it accepts no more work or sources.
    case shutDown
    /// The source was removed; it cannot be changed or added again.
    case sourceRemoved
    /// The call needs a deterministic (manual clock) loop.
    case notDeterministic
    /// The call is not allowed from inside a loop callback (libevent's loop
    /// is not reentrant).
    case reentrantDispatch
    /// libevent or the kernel refused an operation (a system call failed).
    case system(operation: String, errno: Int32)
    /// The signal belongs to someone else in this process (e.g. a
    /// swift-service-lifecycle `ServiceGroup`), see
    /// ``MainRunLoop/reserveSignals(_:for:)``.
    case signalReserved(signal: Int32, owner: String)
    /// The process is not a child of this one (or was already reaped), so
    /// the loop cannot learn how it ends.
    case notChildProcess(pid: Int32)
    /// An argument is out of range (a rate limit's interval of zero, a
    /// negative pid); the message names it.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .shutDown: return "the main loop is shut down"
        case .sourceRemoved: return "the source was removed and cannot be used again"
        case .notDeterministic: return "this call needs a deterministic (manual clock) loop"
        case .reentrantDispatch: return "this call is not allowed from inside a loop callback"
        case .system(let operation, let errno):
            return "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
        case .signalReserved(let signal, let owner):
            return "signal \(signal) (\(String(cString: strsignal(signal)))) belongs to \(owner); the loop does not take it"
        case .notChildProcess(let pid):
            return "process \(pid) is not a child of this process (or was already reaped): only a child's end can be watched"
        case .invalidArgument(let problem): return problem
        }
    }
}
