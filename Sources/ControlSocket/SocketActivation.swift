import FileSupport
import Glibc
import MainLoop

/// Sockets passed by the service manager (`sd_listen_fds(3)`):
/// `$LISTEN_FDS` descriptors from 3 on, meant for this process when
/// `$LISTEN_PID` is its pid, named by `$LISTEN_FDNAMES` (colon-separated).
public enum SocketActivation {
    /// The first passed descriptor (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3

    /// One passed descriptor and its name (`FileDescriptorName=`, or
    /// "unknown" when the manager gave none).
    public struct PassedSocket: Equatable, Sendable {
        /// The descriptor number.
        public var fileDescriptor: Int32
        /// Its name.
        public var name: String
    }

    /// The sockets passed to this process, or an empty array when none
    /// were (the variables are unset or meant for another process). The
    /// variables are removed from the environment, so children do not
    /// mistake them for theirs; the descriptors are marked close-on-exec.
    /// - Throws: ``SocketError/invalidConfiguration(_:)`` for malformed
    ///   variables.
    public static func takePassedSockets() throws(SocketError) -> [PassedSocket] {
        let passed = try parse(pid: ProcessEnvironment.value("LISTEN_PID"), fds: ProcessEnvironment.value("LISTEN_FDS"),
                               names: ProcessEnvironment.value("LISTEN_FDNAMES"), ownPID: getpid())
        for variable in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(variable) }
        for socket in passed { _ = fcntl(socket.fileDescriptor, F_SETFD, FD_CLOEXEC) }
        return passed
    }

    /// The parsing of ``takePassedSockets()``, testable.
    public static func parse(pid: String?, fds: String?, names: String?, ownPID: pid_t) throws(SocketError) -> [PassedSocket] {
        guard let pid, let fds else { return [] }
        guard let owner = Int32(pid), owner > 0 else {
            throw .invalidConfiguration("LISTEN_PID='\(pid)' is not a process id")
        }
        guard owner == ownPID else { return [] }
        guard let count = Int32(fds), count >= 0, count <= 1024 else {
            throw .invalidConfiguration("LISTEN_FDS='\(fds)' is not a descriptor count")
        }
        let given = names.map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        guard names == nil || given.count == Int(count) else {
            throw .invalidConfiguration("LISTEN_FDNAMES names \(given.count) sockets but LISTEN_FDS is \(count)")
        }
        return (0..<count).map { index in
            PassedSocket(fileDescriptor: firstDescriptor + index, name: given.isEmpty ? "unknown" : given[Int(index)])
        }
    }

    /// The control socket among the passed ones: the one named `name`,
    /// else the only one. Nil when none were passed.
    /// - Throws: when several were passed and none is named `name`.
    public static func controlSocket(in passed: [PassedSocket], named name: String = "control") throws(SocketError) -> Int32? {
        if passed.isEmpty { return nil }
        if let named = passed.first(where: { $0.name == name }) { return named.fileDescriptor }
        if passed.count == 1 { return passed[0].fileDescriptor }
        throw .invalidConfiguration("\(passed.count) sockets were passed and none is named '\(name)' (FileDescriptorName=\(name))")
    }

    /// Fails unless `fileDescriptor` is a listening Unix-domain stream socket.
    public static func checkListeningUnixStream(_ fileDescriptor: Int32) throws(SocketError) {
        var status = stat()
        guard fstat(fileDescriptor, &status) == 0 else {
            throw .system(operation: "the passed descriptor \(fileDescriptor) is not open", errno: errno)
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw .invalidConfiguration("the passed descriptor \(fileDescriptor) is not a socket")
        }
        func option(_ name: Int32) throws(SocketError) -> Int32 {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fileDescriptor, SOL_SOCKET, name, &value, &length) == 0 else {
                throw .system(operation: "getsockopt on the passed descriptor \(fileDescriptor)", errno: errno)
            }
            return value
        }
        guard try option(SO_DOMAIN) == AF_UNIX, try option(SO_TYPE) == Int32(SOCK_STREAM.rawValue) else {
            throw .invalidConfiguration("the passed descriptor \(fileDescriptor) is not a Unix-domain stream socket "
                                        + "(ListenStream= with a path)")
        }
        guard try option(SO_ACCEPTCONN) == 1 else {
            throw .invalidConfiguration("the passed descriptor \(fileDescriptor) is not listening (Accept=no is required)")
        }
    }

    /// The path a Unix-domain socket is bound to, for logs ("" if unnamed).
    public static func boundPath(of fileDescriptor: Int32) -> String {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fileDescriptor, $0, &length) }
        }
        guard named == 0 else { return "" }
        return withUnsafeBytes(of: &address.sun_path) { raw in
            let bytes = raw.prefix(while: { $0 != 0 })
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
