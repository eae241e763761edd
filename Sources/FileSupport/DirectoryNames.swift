import Glibc

/// The names in a directory, read without following anything.
public enum DirectoryNames {
    /// The names of `directory`'s entries that `include` accepts, in the
    /// order the kernel lists them, at most `limit` of them; nil when the
    /// directory cannot be opened. `.` and `..` are passed to `include` like
    /// any other name.
    public static func list(_ directory: String, limit: Int = .max, where include: (String) -> Bool) -> [String]? {
        guard let entries = opendir(directory) else { return nil }
        defer { closedir(entries) }
        var names: [String] = []
        while names.count < limit, let entry = readdir(entries) {
            let name = Self.name(of: entry)
            if include(name) { names.append(name) }
        }
        return names
    }

    /// The name of a `readdir` entry, read where it lies. Not
    /// `entry.pointee.d_name`: that copies the whole 256-byte field, past
    /// the end of a short record, and past glibc's buffer (a crash) when the
    /// record is its last (Foundation's `Process.run` crashed so).
    public static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return String(cString: UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self))
    }
}
