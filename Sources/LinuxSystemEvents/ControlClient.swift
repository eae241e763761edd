import Glibc
import MainLoopJSON

/// A blocking client for the control socket (the `ctl` command, tests and
/// the demo).
public enum ControlClient {
    /// A failure to reach the service.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends one request and returns the reply object.
    /// - Parameters:
    ///   - request: the request object (one line of JSON on the wire).
    ///   - path: the control socket's path.
    ///   - timeout: how long to wait for the reply.
    public static func send(_ request: JSONValue, to path: String, timeout: Duration = .seconds(5)) throws(Failure) -> JSONObject {
        let reply = try exchange(Array((request.jsonText + "\n").utf8), path: path, timeout: timeout)
        guard let object = (try? JSONValue.parse(reply))?.objectValue else {
            throw Failure(description: "the service sent an unreadable reply: \(reply)")
        }
        return object
    }

    /// Sends raw bytes and returns the first reply line (or what arrived
    /// before the service closed the connection).
    public static func exchange(_ bytes: [UInt8], path: String, timeout: Duration = .seconds(5),
                                shutdownWrite: Bool = false) throws(Failure) -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let seconds = timeout.components.seconds
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard let connected = UnixSocketAddress.with(path, { connect(fd, $0, $1) }) else {
            throw Failure(description: "socket path too long: \(path)")
        }
        guard connected == 0 else {
            throw Failure(description: "cannot connect to \(path): \(String(cString: strerror(errno)))")
        }
        try checkServer(fd, path: path)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                // The service may have closed on us (e.g. oversize); read its reason.
                break
            }
            offset += sent
        }
        if shutdownWrite { shutdown(fd, Int32(SHUT_WR)) }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(UInt8(ascii: "\n")) {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw Failure(description: "no reply from \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            reply.append(contentsOf: buffer[0..<count])
        }
        let line = reply.prefix { $0 != UInt8(ascii: "\n") }
        return String(decoding: line, as: UTF8.self)
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
