import FileSupport
import Glibc
import MainLoop

/// A file's identity: the same (device, inode) is the same file, whatever
/// path it is reached by now.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    /// The identity of a (device, inode) pair.
    init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

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
    /// Claims `path` for this process's life: an exclusive `flock` on
    /// `PATH.lock` beside it, held by the returned descriptor. Two servers
    /// started at the same moment on one path both used to pass the
    /// liveness probe and both rename a socket into place (the loser kept
    /// running, unreachable); now the second one fails here. The lock file
    /// is removed at stop while still locked; a claim that locked a file
    /// someone removed meanwhile (it no longer is the one at the path)
    /// tries again.
    static func claimPath(_ path: String) throws(SocketError) -> Int32 {
        let lockPath = path + ".lock"
        for _ in 0..<8 {
            let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw .system(operation: "opening the lock file \(lockPath)", errno: errno) }
            var result: Int32
            repeat { result = flock(fd, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
            guard result == 0 else {
                let code = errno
                close(fd)
                if code == EWOULDBLOCK {
                    throw .system(operation: "another process holds \(lockPath) and serves \(path); refusing to take over",
                                  errno: EADDRINUSE)
                }
                throw .system(operation: "locking \(lockPath)", errno: code)
            }
            var locked = stat()
            fstat(fd, &locked)
            if let current = FileIdentity(path: lockPath),
               current == FileIdentity(device: UInt64(locked.st_dev), inode: UInt64(locked.st_ino)) {
                return fd
            }
            close(fd)  // a stopping server removed it after we opened it
        }
        throw .system(operation: "claiming \(lockPath): it keeps being replaced", errno: EAGAIN)
    }

    /// Releases a claim of ``claimPath(_:)``: removes the lock file (still
    /// holding it, so nobody can have locked it) if it is still the one
    /// locked (an operator may have removed it and another server claimed
    /// a new one), and closes it.
    static func releaseClaim(_ fd: Int32, of path: String) {
        var locked = stat()
        if fstat(fd, &locked) == 0,
           FileIdentity(path: path + ".lock") == FileIdentity(device: UInt64(locked.st_dev), inode: UInt64(locked.st_ino)) {
            unlink(path + ".lock")
        }
        close(fd)
    }

    /// Refuses to replace anything at `path` but a stale socket: a socket
    /// that accepts a connection belongs to a live process, and a file of
    /// another kind is not ours to remove. A stale socket is left for the
    /// rename that replaces it.
    static func refuseLiveOrForeignFile(at path: String) throws(SocketError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw .refused("\(path) exists and is not a socket; refusing to replace it")
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

    /// Binds `fd` to `path` and listens, without touching the process's
    /// umask (which every other thread's file creation reads): the socket
    /// is bound where nobody else can reach it, given `mode`, and renamed
    /// into place (atomic, replacing a stale socket).
    /// - In a private parent (a directory of this user's that nobody else
    ///   may enter, as `$XDG_RUNTIME_DIR` and the default socket directory
    ///   are), it is bound beside `path` under a staging name.
    /// - Elsewhere it is bound in a new private directory (mode 0700)
    ///   beside `path`.
    /// - Returns: the socket's identity, and the private directory if one
    ///   was made, now empty, which the caller removes
    ///   (``removeStaging(_:)``): the server does it in the loop's first
    ///   turn. A `mkdir` and an `rmdir` cost 0.15–0.25 ms together on this
    ///   project's test machine, a tenth of a service's start-up, which is
    ///   also why a private parent needs neither. On an error nothing is
    ///   left behind.
    static func bindAndPlace(_ fd: Int32, at path: String,
                             mode: mode_t) throws(SocketError) -> (identity: FileIdentity, staging: String?) {
        let (parent, _) = AtomicFile.split(path)
        removeStagingOfDeadServers(in: parent)
        let pid = String(getpid(), radix: 16)
        if isPrivateDirectory(parent) {
            for _ in 0..<8 {
                let staged = "\(parent)/\(stagingPrefix)\(pid)-\(String(UInt32.random(in: .min ... .max), radix: 16))"
                guard try bind(fd, to: staged, naming: path) else { continue }  // the name is taken: try another
                return (try place(fd, from: staged, at: path, mode: mode), nil)
            }
            throw .system(operation: "bind on \(path): no free staging name in \(parent)", errno: EADDRINUSE)
        }
        var template = Array("\(parent)/\(stagingPrefix)\(pid)-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw .system(operation: "creating a private directory in \(parent)", errno: errno)
        }
        let staging = String(cString: created)
        do throws(SocketError) {
            guard chmod(staging, 0o700) == 0 else { throw .system(operation: "chmod \(staging)", errno: errno) }
            let staged = staging + "/s"
            guard try bind(fd, to: staged, naming: path) else {
                throw .system(operation: "bind on \(path)", errno: EADDRINUSE)
            }
            return (try place(fd, from: staged, at: path, mode: mode), staging)
        } catch {
            removeStaging(staging)
            throw error
        }
    }

    /// Whether only this user (and root) can reach what `directory`
    /// holds: a directory owned by the effective uid whose mode gives the
    /// group and others nothing (with an ACL, the group bits are its mask,
    /// so a named entry that grants anything shows there).
    static func isPrivateDirectory(_ directory: String) -> Bool {
        var status = stat()
        return stat(directory, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
            && status.st_uid == geteuid() && status.st_mode & 0o077 == 0
    }

    /// Binds `fd` to `staged`. - Returns: false when the name is taken.
    private static func bind(_ fd: Int32, to staged: String, naming path: String) throws(SocketError) -> Bool {
        guard let bound = UnixSocketAddress.with(staged, { Glibc.bind(fd, $0, $1) }) else {
            throw .system(operation: "socket path \(staged) longer than \(UnixSocketAddress.maxPathBytes - 1) bytes",
                          errno: ENAMETOOLONG)
        }
        if bound == 0 { return true }
        if errno == EADDRINUSE { return false }
        throw .system(operation: "bind on \(path)", errno: errno)
    }

    /// Listens on the socket bound at `staged`, gives it `mode` and renames
    /// it to `path`; on an error the staged socket is removed.
    private static func place(_ fd: Int32, from staged: String, at path: String,
                              mode: mode_t) throws(SocketError) -> FileIdentity {
        // Listening before the rename: once the path names the socket, a
        // client's connect succeeds (and a probe sees it live).
        guard listen(fd, 64) == 0 else {
            let error = SocketError.system(operation: "listen on \(path)", errno: errno)
            unlink(staged)
            throw error
        }
        guard chmod(staged, mode) == 0, let identity = FileIdentity(path: staged), rename(staged, path) == 0 else {
            let error = SocketError.system(operation: "placing the socket at \(path)", errno: errno)
            unlink(staged)
            throw error
        }
        return identity
    }

    /// Removes an empty staging directory. Best effort: one left behind
    /// (a kill before this) is removed by the next server's
    /// ``removeStagingOfDeadServers(in:)``.
    static func removeStaging(_ staging: String) {
        rmdir(staging)
    }

    /// Staging names are `.ml<pid in hex>-<suffix>`, so one that a
    /// killed server left behind can be told from a live server's.
    static let stagingPrefix = ".ml"

    /// Removes what servers that died between staging and placing their
    /// socket (SIGKILL) left in `parent`: ours, named for a process that
    /// is gone, either a staged socket or a staging directory (and the
    /// socket in it).
    static func removeStagingOfDeadServers(in parent: String) {
        Leftovers.removeThoseOfDeadProcesses(in: parent, prefix: stagingPrefix, radix: 16) { staged in
            var status = stat()
            guard lstat(staged, &status) == 0, status.st_uid == geteuid() else { return }
            switch status.st_mode & S_IFMT {
            case S_IFSOCK:
                unlink(staged)
            case S_IFDIR:
                unlink(staged + "/s")
                rmdir(staged)
            default:
                return
            }
        }
    }
}
