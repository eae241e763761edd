import Glibc
import MainLoop

/// Where the control socket lives when no `--socket` is given:
/// `$XDG_RUNTIME_DIR/mainloop.sock` (a per-user directory systemd makes),
/// else `mainloop.sock` in `${TMPDIR:-/tmp}/mainloop-UID`, a directory of
/// the user's own. A shared `/tmp/mainloop-UID.sock` could be bound first by
/// another user, and a client would then talk to the squatter.
public enum DefaultSocketPath {
    /// The default path. The private directory is made (mode 0700) when
    /// `creating` and missing, and in any case verified when it exists: a
    /// real directory (not a symlink), owned by this user, with no access
    /// for group or others.
    /// - Throws: ``SocketError/system(operation:errno:)`` when the directory
    ///   cannot be made or checked, ``SocketError/refused(_:)`` naming the
    ///   directory and what is wrong with it.
    public static func resolve(creating: Bool) throws(SocketError) -> String {
        if let runtime = environment("XDG_RUNTIME_DIR") { return runtime + "/mainloop.sock" }
        let base = environment("TMPDIR") ?? "/tmp"
        let directory = base + "/mainloop-\(geteuid())"
        var status = stat()
        if lstat(directory, &status) != 0 {
            guard errno == ENOENT, creating else { return directory + "/mainloop.sock" }
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw .system(operation: "creating \(directory)", errno: errno)
            }
            guard lstat(directory, &status) == 0 else { throw .system(operation: "checking \(directory)", errno: errno) }
        }
        try verifyPrivate(directory, status)
        return directory + "/mainloop.sock"
    }

    private static func verifyPrivate(_ directory: String, _ status: stat) throws(SocketError) {
        let problem: String?
        if status.st_mode & S_IFMT != S_IFDIR {
            problem = "it is not a directory (a symlink or another file)"
        } else if status.st_uid != geteuid() {
            problem = "it is owned by uid \(status.st_uid), not by you (uid \(geteuid()))"
        } else if status.st_mode & 0o077 != 0 {
            problem = "its mode is \(String(status.st_mode & 0o777, radix: 8)), open to other users (0700 expected)"
        } else {
            problem = nil
        }
        if let problem { throw .refused("refusing to use \(directory) for the control socket: \(problem)") }
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
