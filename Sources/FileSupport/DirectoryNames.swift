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
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if include(name) { names.append(name) }
        }
        return names
    }
}
