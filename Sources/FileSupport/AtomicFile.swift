import Glibc

/// Crash-safe file replacement for saving app state (call it from
/// `applicationDidEnterBackground`: a suspended app may be purged without
/// notice). The new contents go to a temporary file in the same directory,
/// are fsynced, renamed over the target, and the directory is fsynced, so a
/// crash at any point leaves either the old file or the new one, never a
/// torn mix.
public enum AtomicFile {
    /// An error from the kernel while writing `path`.
    public struct WriteError: Error, CustomStringConvertible, Equatable {
        /// The file being written.
        public let path: String
        /// The failing step.
        public let operation: String
        /// The errno it failed with.
        public let code: Int32
        public var description: String {
            "\(operation) failed for \(path): \(String(cString: strerror(code)))"
        }
    }

    /// Atomically replaces `path` with `bytes` (file mode `mode`).
    /// The file gets exactly `mode` (not narrowed by the umask) and, when
    /// `owner` is given and differs from ours, that owner if the system lets
    /// us (root does; otherwise it stays ours, as any rewrite by its user).
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600,
                             owner: (uid: uid_t, gid: gid_t)? = nil) throws(WriteError) {
        let directory = split(path).directory
        let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw WriteError(path: path, operation: "open(temporary)", code: errno) }
        if let owner, owner.uid != geteuid() || owner.gid != getegid(), fchown(fd, owner.uid, owner.gid) != 0, errno != EPERM {
            let code = errno
            close(fd)
            unlink(temporary)
            throw WriteError(path: path, operation: "fchown", code: code)
        }
        guard fchmod(fd, mode) == 0 else {
            let code = errno
            close(fd)
            unlink(temporary)
            throw WriteError(path: path, operation: "fchmod", code: code)
        }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + written, buffer.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlink(temporary)
                throw WriteError(path: path, operation: "write", code: code)
            }
            written += result
        }
        guard fsync(fd) == 0 else {
            let code = errno
            close(fd)
            unlink(temporary)
            throw WriteError(path: path, operation: "fsync", code: code)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw WriteError(path: path, operation: "rename", code: code)
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Removes the temporaries (`FILE.tmp-PID-N`) that writers of `path`
    /// left behind when they died between creating and renaming them
    /// (SIGKILL, a crash): those whose process is gone. A live writer's
    /// temporary is never touched. Call it before writing (a writer that
    /// holds a lock shared by every writer of `path` calls it under the lock).
    public static func removeTemporariesOfDeadWriters(of path: String) {
        let (directory, name) = split(path)
        Leftovers.removeThoseOfDeadProcesses(in: directory, prefix: name + ".tmp-") { unlink($0) }
    }

    /// `path`'s directory (`.` for a bare name, `/` at the root) and file
    /// name: where a temporary for `path` goes, and what it is named after.
    public static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        return (slash == path.startIndex ? "/" : String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    /// The path of `name` in `directory`, the way ``split(_:)`` took it
    /// apart (a bare name comes back as `./name`).
    public static func join(_ directory: String, _ name: String) -> String {
        directory == "/" ? "/" + name : directory + "/" + name
    }

    /// Atomically replaces `path` with the UTF-8 of `text`.
    public static func write(_ text: String, to path: String, mode: mode_t = 0o600) throws(WriteError) {
        try write(Array(text.utf8), to: path, mode: mode)
    }
}
