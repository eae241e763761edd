import EngineWire
import Glibc
import Logging
import MainLoop
import MainLoopJSON

/// A Unix-domain control socket on the loop: newline-delimited JSON
/// requests, one JSON reply each.
///
/// The socket file is created with mode 0600 (by default) and every
/// connection's peer is checked with `SO_PEERCRED`: only the service's own
/// user (and root) may talk to it; others get an error line and are
/// disconnected. Lines are limited to ``maxLineBytes`` and connections to
/// ``maxConnections``. Loop thread only; may be released on any thread
/// (released without ``stop()``, it stops on the loop).
public final class ControlServer {
    /// The socket path.
    public let path: String
    /// The longest request line accepted.
    public let maxLineBytes: Int
    /// The most clients at once; more are refused.
    public let maxConnections: Int
    /// Unread reply bytes at which a connection stops reading its client's
    /// requests (until they drain below half of it).
    public let maxPendingReplyBytes: Int
    private let loop: MainRunLoop
    private let listenFD: Int32
    private var listenSource: FileDescriptorSource?
    private var connections: [Int32: ControlConnection] = [:]
    private let allowedUIDs: Set<uid_t>
    private let handler: (JSONValue) -> JSONObject
    private let logger: Logger
    /// Connections refused because of the peer's uid.
    public private(set) var refusedPeers = 0
    /// Requests that were not valid JSON.
    public private(set) var malformedRequests = 0

    /// Creates the socket at `path` (replacing a stale socket there, never
    /// any other kind of file) and starts accepting.
    /// - Parameter handler: turns a parsed request into a reply object.
    public init(loop: MainRunLoop, path: String, mode: mode_t = 0o600, maxLineBytes: Int = 64 * 1024,
                maxConnections: Int = 64, maxPendingReplyBytes: Int = 1 << 20, logger: Logger, handler: @escaping (JSONValue) -> JSONObject) throws(MainLoopError) {
        self.loop = loop
        self.path = path
        self.maxLineBytes = maxLineBytes
        self.maxConnections = maxConnections
        self.maxPendingReplyBytes = max(1, maxPendingReplyBytes)
        self.logger = logger
        self.handler = handler
        allowedUIDs = [geteuid(), 0]
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw .system(operation: "\(path) exists and is not a socket; refusing to replace it", errno: EEXIST)
            }
            unlink(path)
        }
        listenFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listenFD >= 0 else { throw .system(operation: "socket(AF_UNIX)", errno: errno) }
        // The socket file gets the mode from the umask at bind(); narrow it
        // so no other user can connect even for an instant, then set it.
        let previousMask = umask(0o177)
        let bound = UnixSocketAddress.with(path) { bind(listenFD, $0, $1) }
        umask(previousMask)
        guard let bound else {
            close(listenFD)
            throw .system(operation: "socket path longer than \(UnixSocketAddress.maxPathBytes - 1) bytes", errno: ENAMETOOLONG)
        }
        guard bound == 0, chmod(path, mode) == 0, listen(listenFD, 64) == 0 else {
            let error = MainLoopError.system(operation: "bind/listen on \(path)", errno: errno)
            close(listenFD)
            throw error
        }
        listenSource = try loop.addFileDescriptor(listenFD, interest: .read, priority: .input, owner: self) { server, _ in
            server.acceptAll()
        }
    }

    deinit {
        guard let listenSource else { return }
        // Released without stop(), perhaps on another thread: stop on the loop.
        let resources = (source: listenSource, fd: listenFD, path: path, connections: Array(connections.values))
        loop.releaseOnLoop(resources) { resources in
            for connection in resources.connections { connection.close(reason: nil) }
            resources.source.removeIfNeeded()
            close(resources.fd)
            unlink(resources.path)
        }
    }

    /// Closes every connection and the socket, and removes the socket file.
    public func stop() {
        for connection in connections.values { connection.close(reason: nil) }
        guard let listenSource else { return }
        listenSource.removeIfNeeded()
        self.listenSource = nil
        close(listenFD)
        unlink(path)
    }

    /// How many clients are connected.
    public var connectionCount: Int { connections.count }

    private func acceptAll() {
        while true {
            // accept4 needs _GNU_SOURCE, which Swift's Glibc module lacks.
            let fd = accept(listenFD, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { logger.warning("accept failed: \(String(cString: strerror(errno)))") }
                return
            }
            admit(fd)
        }
    }

    private func admit(_ fd: Int32) {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            refuse(fd, "cannot read the peer's credentials")
            return
        }
        guard allowedUIDs.contains(credentials.uid) else {
            refusedPeers += 1
            logger.warning("control socket: refused a connection from uid \(credentials.uid) (pid \(credentials.pid))")
            refuse(fd, "permission denied: uid \(credentials.uid) may not control this service")
            return
        }
        guard connections.count < maxConnections else {
            refuse(fd, "too many connections (limit \(maxConnections))")
            return
        }
        do {
            connections[fd] = try ControlConnection(fd: fd, server: self, loop: loop)
        } catch {
            refuse(fd, "cannot watch the connection: \(error)")
        }
    }

    /// Best-effort error line, then close.
    private func refuse(_ fd: Int32, _ message: String) {
        let line = Array((JSONValue.object(EngineQueries.error(message)).jsonText + "\n").utf8)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(fd)
    }

    func connectionClosed(_ connection: ControlConnection, reason: String?) {
        connections[connection.fd] = nil
        if let reason { logger.info("control connection closed: \(reason)") }
    }

    /// Parses one request line and returns the reply.
    func respond(to line: String) -> JSONObject {
        do {
            return handler(try JSONValue.parse(line))
        } catch {
            malformedRequests += 1
            logger.notice("control socket: malformed request: \(error)")
            return EngineQueries.error("malformed JSON request: \(error)")
        }
    }
}

/// `struct ucred` (pid, uid, gid), which Swift's Glibc module hides behind
/// _GNU_SOURCE; same layout, filled by `getsockopt(SO_PEERCRED)`.
struct PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}
