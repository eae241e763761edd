import ControlSocket
import FileSupport
import Glibc
import MainLoop

/// The service-manager notification protocol (`sd_notify(3)`), without
/// libsystemd: one datagram of `KEY=value` lines to the `AF_UNIX` socket
/// named by `$NOTIFY_SOCKET` (a path, or an abstract name starting with `@`).
///
/// Sends are non-blocking: a manager that is not listening makes ``send(_:)``
/// throw, and ``SystemdSupervision`` logs that (rate-limited) rather than
/// stopping the service. Thread-safe: each send is one `sendto`.
public final class SystemdNotifier: Sendable {
    /// Where the notifications go (as `$NOTIFY_SOCKET` gave it).
    public let socketName: String
    private let fd: Int32

    /// The notifier for `$NOTIFY_SOCKET`, or nil when it is unset (not
    /// started by a service manager that listens).
    /// - Throws: ``/ControlSocket/SocketError/invalidConfiguration(_:)`` when
    ///   the variable is set but unusable (not a path or an abstract name, too
    ///   long), ``/ControlSocket/SocketError/system(operation:errno:)`` when no
    ///   socket can be made.
    public static func fromEnvironment() throws(SocketError) -> SystemdNotifier? {
        guard let name = ProcessEnvironment.value("NOTIFY_SOCKET") else { return nil }
        return try SystemdNotifier(socketName: name)
    }

    /// A notifier for an explicit socket (a path or `@abstract`).
    public init(socketName: String) throws(SocketError) {
        guard socketName.hasPrefix("/") || socketName.hasPrefix("@"), socketName.utf8.count > 1 else {
            throw .invalidConfiguration("NOTIFY_SOCKET must be an absolute path or an @abstract name, not '\(socketName)'")
        }
        guard socketName.utf8.count < UnixSocketAddress.maxPathBytes else {
            throw .invalidConfiguration("NOTIFY_SOCKET '\(socketName)' is longer than a socket address holds")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system(operation: "socket(AF_UNIX, SOCK_DGRAM)", errno: errno) }
        self.socketName = socketName
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends one notification: `fields` joined by newlines (e.g.
    /// `["READY=1", "STATUS=active"]`).
    /// - Throws: ``/ControlSocket/SocketError/system(operation:errno:)`` when the
    ///   datagram cannot be sent (no listener, a full queue).
    public func send(_ fields: [String]) throws(SocketError) {
        // Bytes appended field by field: `joined(separator:)` is generic
        // code left unspecialized, and its first call (the READY=1 of every
        // start-up) resolved associated types at run time, 0.1 million
        // instructions.
        var message: [UInt8] = []
        for (index, field) in fields.enumerated() {
            if index > 0 { message.append(UInt8(ascii: "\n")) }
            message.append(contentsOf: field.utf8)
        }
        let sent = UnixSocketAddress.withPathOrAbstract(socketName) { address, length in
            message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
        }
        guard let sent, sent == message.count else {
            throw .system(operation: "sending '\(fields.first ?? "")' to NOTIFY_SOCKET \(socketName)", errno: errno)
        }
    }

    /// `READY=1` with a status line.
    public func ready(status: String) throws(SocketError) {
        try send(["READY=1", "STATUS=\(Self.oneLine(status))", "MAINPID=\(getpid())"])
    }

    /// `STATUS=...`: what `systemctl status` shows.
    public func status(_ text: String) throws(SocketError) { try send(["STATUS=\(Self.oneLine(text))"]) }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (required by `Type=notify-reload`).
    public func reloading(status: String) throws(SocketError) {
        let micros = LoopInstant.monotonicNow().nanoseconds / 1000
        try send(["RELOADING=1", "MONOTONIC_USEC=\(micros)", "STATUS=\(Self.oneLine(status))"])
    }

    /// `STOPPING=1`.
    public func stopping(status: String) throws(SocketError) {
        try send(["STOPPING=1", "STATUS=\(Self.oneLine(status))"])
    }

    /// `WATCHDOG=1`: the keep-alive ping.
    public func watchdogPing() throws(SocketError) { try send(["WATCHDOG=1"]) }

    /// A status must be one line: a newline would start another field.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
