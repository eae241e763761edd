import Glibc
import MainLoop
import MainLoopJSON

/// A blocking client for the control socket (the `ctl` command, tests and
/// the demo).
public enum ControlClient {
    /// A failure to reach the service.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The largest reply accepted by default (16 MiB; the service's own
    /// default limit is 1 MiB).
    public static let defaultMaxReplyBytes = 16 << 20

    /// Sends one request and returns the reply object.
    /// - Parameters:
    ///   - request: the request object (one line of JSON on the wire).
    ///   - path: the control socket's path.
    ///   - timeout: the deadline for the whole exchange (connect, send,
    ///     and the complete reply line), however slowly the service trickles.
    ///   - maxReplyBytes: a longer reply is an error, not an ever-growing buffer.
    public static func send(_ request: JSONValue, to path: String, timeout: Duration = .seconds(5),
                            maxReplyBytes: Int = defaultMaxReplyBytes) throws(Failure) -> JSONObject {
        let reply = try exchange(Array((request.jsonText + "\n").utf8), path: path, timeout: timeout,
                                 maxReplyBytes: maxReplyBytes)
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(reply)
        } catch {
            throw Failure(description: "the service sent an unreadable reply (\(error)): \(reply.prefix(200))")
        }
        guard let object = parsed.objectValue else {
            throw Failure(description: "the service sent a reply that is not an object: \(reply.prefix(200))")
        }
        return object
    }

    /// Sends raw bytes and returns the first reply line (or what arrived
    /// before the service closed the connection). `timeout` is a deadline
    /// for the whole exchange; a reply line longer than `maxReplyBytes` is
    /// an error.
    public static func exchange(_ bytes: [UInt8], path: String, timeout: Duration = .seconds(5),
                                shutdownWrite: Bool = false,
                                maxReplyBytes: Int = defaultMaxReplyBytes) throws(Failure) -> String {
        let deadline = LoopInstant.monotonicNow() + timeout
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // A Unix-domain connect waits (when the service's backlog is full)
        // for at most SO_SNDTIMEO.
        var limit = timeval(tv_sec: Int(timeout.components.seconds),
                            tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard let connected = UnixSocketAddress.with(path, { connect(fd, $0, $1) }) else {
            throw Failure(description: "socket path too long: \(path)")
        }
        guard connected == 0 else { throw connectFailure(path: path, errno: errno) }
        try checkServer(fd, path: path)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var offset = 0
        sending: while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent >= 0 {
                offset += sent
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try wait(fd, for: Int16(POLLOUT), until: deadline, path: path)
            // The service may have closed on us (e.g. oversize); read its reason.
            default: break sending
            }
        }
        if shutdownWrite { shutdown(fd, Int32(SHUT_WR)) }
        let reply = try readLine(fd, path: path, until: deadline, maxReplyBytes: maxReplyBytes)
        return String(decoding: reply, as: UTF8.self)
    }

    /// Reads up to the first newline (or the service's close) and returns
    /// what came before it. Each byte is searched for the newline once, and
    /// the deadline is checked after every read, not only when a read would
    /// block: a service that streams faster than it is read never makes
    /// `recv` wait.
    private static func readLine(_ fd: Int32, path: String, until deadline: LoopInstant,
                                 maxReplyBytes: Int) throws(Failure) -> ArraySlice<UInt8> {
        let newline = UInt8(ascii: "\n")
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            guard LoopInstant.monotonicNow() < deadline else { throw timeLimitFailure(path: path) }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    try wait(fd, for: Int16(POLLIN), until: deadline, path: path)
                    continue
                default: throw Failure(description: "no reply from \(path): \(String(cString: strerror(errno)))")
                }
            }
            if count == 0 { return reply[...] }
            let searched = reply.count
            reply.append(contentsOf: buffer[0..<count])
            let lineEnd = reply[searched...].firstIndex(of: newline)
            guard (lineEnd ?? reply.count) <= maxReplyBytes else {
                throw Failure(description: "the reply from \(path) is longer than \(maxReplyBytes) bytes; not read further")
            }
            if let lineEnd { return reply[..<lineEnd] }
        }
    }

    private static func timeLimitFailure(path: String) -> Failure {
        Failure(description: "no complete reply from \(path) within the time limit")
    }

    /// Waits until `fd` is ready for `events` or the deadline passes (an error then).
    private static func wait(_ fd: Int32, for events: Int16, until deadline: LoopInstant, path: String) throws(Failure) {
        while true {
            let remaining = deadline - LoopInstant.monotonicNow()
            guard remaining > .zero else { throw timeLimitFailure(path: path) }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var poller = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw Failure(description: "waiting for \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Why a connect failed, with what to do about it.
    static func connectFailure(path: String, errno code: Int32) -> Failure {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOENT, ECONNREFUSED:
            return Failure(description: """
                cannot connect to \(path): \(reason); no service is listening there. Start one with \
                'mainloop run' (add '--socket \(path)' if it is not the default path), or pass the socket \
                of a running service with --socket PATH
                """)
        case EAGAIN:
            return Failure(description: "cannot connect to \(path): the service's backlog is full (it is busy); try again")
        default:
            return Failure(description: "cannot connect to \(path): \(reason)")
        }
    }

    /// Talks only to a service run by this user or by root (SO_PEERCRED on
    /// the connected socket): anyone else who bound the path first would
    /// otherwise receive the request and answer it.
    static func checkServer(_ fd: Int32, path: String) throws(Failure) {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            throw Failure(description: "cannot check who serves \(path): \(String(cString: strerror(errno)))")
        }
        guard credentials.uid == geteuid() || credentials.uid == 0 else {
            throw Failure(description: """
                the socket at \(path) is served by uid \(credentials.uid) (pid \(credentials.pid)), \
                not by you (uid \(geteuid())) or root; refusing to talk to it
                """)
        }
    }
}
