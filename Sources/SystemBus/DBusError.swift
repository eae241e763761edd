import Glibc

/// Why a D-Bus call or connection failed.
public enum DBusError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer answered with a D-Bus error (its name and message), e.g.
    /// `org.freedesktop.DBus.Error.ServiceUnknown` for a daemon that is not running.
    case remote(name: String, message: String)
    /// sd-bus or the kernel refused an operation.
    case system(operation: String, errno: Int32)
    /// A reply did not have the expected shape.
    case malformed(String)
    /// A message was over the ``DBusReadLimits`` it was read with; nothing
    /// of it was used.
    case tooLarge(String)
    /// The bus address is not one (its syntax), named before connecting.
    case invalidAddress(address: String, problem: String)
    /// A call had no reply within its timeout.
    case timedOut(String)
    /// The connection is closed (the bus went away, or it was closed).
    case disconnected
    /// libsystemd (sd-bus) could not be loaded: not installed, or without
    /// a function MainLoop calls. It is opened when the first connection
    /// is made, never at start-up.
    case libraryUnavailable(String)

    public var description: String {
        switch self {
        case .remote(let name, let message): return "\(name): \(message)"
        case .system(let operation, let code): return "\(operation): \(String(cString: strerror(code))) (errno \(code))"
        case .malformed(let problem): return "malformed reply: \(problem)"
        case .tooLarge(let problem): return "a message too large to read: \(problem)"
        case .invalidAddress(let address, let problem): return "'\(address)' is not a D-Bus address: \(problem)"
        case .timedOut(let call): return "\(call) had no reply in time"
        case .disconnected: return "the bus connection is closed"
        case .libraryUnavailable(let problem): return "sd-bus is unavailable: \(problem)"
        }
    }
}
