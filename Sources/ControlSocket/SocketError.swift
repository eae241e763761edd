import Glibc
import MainLoop

/// Errors of the sockets a service sets up: the control socket, the
/// sockets systemd passes in, and systemd's notify socket. Three families: a system call failed (``system(operation:errno:)``), a
/// setting is wrong (``invalidConfiguration(_:)``: a malformed `LISTEN_PID`,
/// a passed descriptor that is not a listening Unix stream socket), or what
/// the call would do is unsafe (``refused(_:)``: replacing a file that is
/// not a socket, a directory others can write). The loop's own errors come
/// through as ``loop(_:)``.
public enum SocketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call failed; the operation names what was tried.
    case system(operation: String, errno: Int32)
    /// A setting is malformed (an environment variable such as
    /// `LISTEN_PID`, a passed descriptor); the message names it and what is wrong.
    case invalidConfiguration(String)
    /// The call would do something unsafe (replace a file that is not a
    /// socket, use a directory others can write); the message says what and why.
    case refused(String)
    /// The loop refused (shut down, out of descriptors).
    case loop(MainLoopError)

    public var description: String {
        switch self {
        case .system(let operation, let errno):
            return "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
        case .invalidConfiguration(let problem): return problem
        case .refused(let reason): return reason
        case .loop(let error): return error.description
        }
    }
}
