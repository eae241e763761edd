import Glibc
import MainLoop

/// A file's identity: the same (device, inode) is the same file, whatever
/// path it is reached by now.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    /// The identity of what `path` names (not following a final symlink).
    init?(path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// Unlinks `path` if it still names this file.
    func unlinkIfStill(at path: String) {
        if FileIdentity(path: path) == self { unlink(path) }
    }
}

extension ControlServer {
    /// Refuses to replace anything at `path` but a stale socket: a socket
    /// that accepts a connection belongs to a live process, and a file of
    /// another kind is not ours to remove. A stale socket is left for the
    /// rename that replaces it.
    static func refuseLiveOrForeignFile(at path: String) throws(MainLoopError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw .system(operation: "\(path) exists and is not a socket; refusing to replace it", errno: EEXIST)
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { throw .system(operation: "socket(AF_UNIX)", errno: errno) }
        defer { close(probe) }
        let connected = UnixSocketAddress.with(path) { connect(probe, $0, $1) }
        if connected == 0 {
            throw .system(operation: "another process is listening on \(path); refusing to take over its socket",
                          errno: EADDRINUSE)
        }
    }

    /// Binds `fd` to `path` and listens, without touching the process's umask (which
    /// every other thread's file creation reads): binds in a new private
    /// directory beside `path` (mode 0700, so nobody else can reach the
    /// socket while its mode is being set), sets `mode`, and renames it
    /// into place (atomic, replacing a stale socket).
    static func bindThroughPrivateDirectory(_ fd: Int32, at path: String, mode: mode_t) throws(MainLoopError) -> FileIdentity {
        let (parent, _) = FileWatcher.split(path)
        var template = Array("\(parent)/.mlXXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw .system(operation: "creating a private directory in \(parent)", errno: errno)
        }
        let staging = String(cString: created)
        defer { rmdir(staging) }
        guard chmod(staging, 0o700) == 0 else { throw .system(operation: "chmod \(staging)", errno: errno) }
        let staged = staging + "/s"
        guard let bound = UnixSocketAddress.with(staged, { bind(fd, $0, $1) }) else {
            throw .system(operation: "socket path \(staged) longer than \(UnixSocketAddress.maxPathBytes - 1) bytes",
                          errno: ENAMETOOLONG)
        }
        guard bound == 0 else { throw .system(operation: "bind on \(path)", errno: errno) }
        // Listening before the rename: once the path names the socket, a
        // client's connect succeeds (and a probe sees it live).
        guard listen(fd, 64) == 0 else {
            let error = MainLoopError.system(operation: "listen on \(path)", errno: errno)
            unlink(staged)
            throw error
        }
        guard chmod(staged, mode) == 0, let identity = FileIdentity(path: staged), rename(staged, path) == 0 else {
            let error = MainLoopError.system(operation: "placing the socket at \(path)", errno: errno)
            unlink(staged)
            throw error
        }
        return identity
    }
}
