import Glibc

/// What a process leaves behind when it is killed between creating a file
/// and renaming or removing it (an ``AtomicFile`` temporary, a control
/// socket's staging directory). Such names carry the process's id, so a
/// later process can tell a dead one's leftovers from a live one's work.
public enum Leftovers {
    /// Calls `remove` with the path of each entry of `directory` named
    /// `prefix` + a process id (digits in `radix`) + `-` + anything, whose
    /// process no longer exists (`kill(pid, 0)` fails with `ESRCH`). A live
    /// process's entry is never passed; an unreadable directory passes none.
    public static func removeThoseOfDeadProcesses(in directory: String, prefix: String, radix: Int = 10,
                                                  remove: (String) -> Void) {
        for name in DirectoryNames.list(directory, where: { $0.hasPrefix(prefix) }) ?? [] {
            let rest = name.dropFirst(prefix.count)
            guard name.hasPrefix(prefix), let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash], radix: radix),
                  pid > 0, kill(pid, 0) != 0, errno == ESRCH else { continue }
            remove(AtomicFile.join(directory, name))
        }
    }
}
