import FileSupport
import Glibc
import MainLoopJSON

/// User defaults shared between processes: one JSON object per app domain,
/// in a file (default `$XDG_CONFIG_HOME/mainloop/<domain>.json`, else
/// `~/.config/mainloop/<domain>.json`).
///
/// Writes are read-modify-write under an exclusive `flock` on a sidecar
/// `.lock` file (so two processes never lose each other's keys) and replace
/// the file atomically (temp file, fsync, rename; see ``/FileSupport/AtomicFile``), so a
/// crash mid-write leaves the old or the new file, never a torn one. A
/// corrupt file makes every call throw ``UserDefaultsError/corrupt(path:reason:)``
/// and is never overwritten. Changes made by any process are noticed by
/// ``UserDefaultsMonitor``.
///
/// The file is read only when it is a regular file of at most
/// ``maxFileBytes`` (another process may replace it with a FIFO, a device
/// or a huge file); otherwise every call throws
/// ``UserDefaultsError/notRead(_:)`` and nothing is written over it.
public final class UserDefaultsStore {
    /// The JSON file.
    public let path: String
    /// The largest file read, in bytes (8 MiB by default: the service's
    /// default limits allow 1,024 keys of 16 KiB values).
    public var maxFileBytes = 8 << 20

    /// A store backed by `path`.
    public init(path: String) { self.path = path }

    /// The store of an app domain, at ``defaultPath(domain:)``.
    public convenience init(domain: String) throws(UserDefaultsError) {
        self.init(path: try Self.defaultPath(domain: domain))
    }

    /// `$XDG_CONFIG_HOME/mainloop/<domain>.json` (or under `~/.config`).
    public static func defaultPath(domain: String) throws(UserDefaultsError) -> String {
        let allowed = domain.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" }
        guard !domain.isEmpty, allowed, domain != ".", domain != ".." else { throw .invalidDomain(domain) }
        // The XDG base directory spec: a relative XDG_CONFIG_HOME is invalid
        // and ignored (it would depend on the working directory).
        let configured = ProcessEnvironment.value("XDG_CONFIG_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
        let base = configured ?? ((ProcessEnvironment.value("HOME") ?? "/root") + "/.config")
        return "\(base)/mainloop/\(domain).json"
    }

    // MARK: Reading

    /// Every key and value; an absent file is an empty domain.
    /// - Throws: ``UserDefaultsError/corrupt(path:reason:)``, ``UserDefaultsError/io(_:)``.
    public func dictionary() throws(UserDefaultsError) -> JSONObject {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.regularFileBytes(path, maxBytes: maxFileBytes)
        } catch {
            if error.isMissing { return JSONObject() }
            if case .unreadable(let failure) = error { throw .io(failure.description) }
            throw .notRead(error)
        }
        // Strict: a lossy decode (U+FFFD) would be written back on the next
        // change and lose what the file said.
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .corrupt(path: path, reason: "the file is not valid UTF-8")
        }
        if text.allSatisfy(\.isWhitespace) { return JSONObject() }
        let json: JSONValue
        do {
            json = try JSONValue.parse(text)
        } catch {
            throw .corrupt(path: path, reason: "invalid JSON at \(error)")
        }
        guard let object = json.objectValue else { throw .corrupt(path: path, reason: "the top level is not an object") }
        return object
    }

    /// The value for `key`, or nil.
    public func value(forKey key: String) throws(UserDefaultsError) -> JSONValue? { try dictionary()[key] }
    /// The string for `key`, or nil if absent or not a string.
    public func string(forKey key: String) throws(UserDefaultsError) -> String? { try value(forKey: key)?.stringValue }
    /// The number for `key`, or nil if absent or not a number.
    public func double(forKey key: String) throws(UserDefaultsError) -> Double? { try value(forKey: key)?.numberValue }
    /// The integer for `key`, or nil if absent or not an integral number.
    public func integer(forKey key: String) throws(UserDefaultsError) -> Int? {
        guard let number = try double(forKey: key), number == number.rounded(), abs(number) < 9e15 else { return nil }
        return Int(number)
    }
    /// The Bool for `key`, or nil if absent or not a Bool.
    public func bool(forKey key: String) throws(UserDefaultsError) -> Bool? { try value(forKey: key)?.boolValue }

    // MARK: Writing

    /// Sets `key` to `value` (`.null` is stored as JSON null; use
    /// ``removeValue(forKey:)`` to delete).
    public func set(_ value: JSONValue, forKey key: String) throws(UserDefaultsError) {
        try update { $0[key] = value }
    }

    /// Removes `key`; removing an absent key leaves the file alone.
    public func removeValue(forKey key: String) throws(UserDefaultsError) {
        try update { $0[key] = nil }
    }

    /// Read-modify-write under the cross-process lock; writes only if the
    /// object changed.
    private func update(_ change: (inout JSONObject) -> Void) throws(UserDefaultsError) {
        try createParentDirectories()
        let lockPath = path + ".lock"
        // O_NOFOLLOW: a symlink planted at the lock's path must not make us
        // create or open a file elsewhere.
        let lockFD = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lockFD >= 0 else { throw .io("cannot open \(lockPath): \(String(cString: strerror(errno)))") }
        defer { close(lockFD) }
        while flock(lockFD, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .io("cannot lock \(lockPath): \(String(cString: strerror(errno)))") }
        }
        defer { flock(lockFD, LOCK_UN) }
        var object = try dictionary()
        let before = object
        change(&object)
        guard object != before || object.orderedKeys != before.orderedKeys else { return }
        var status = stat()
        let exists = lstat(path, &status) == 0
        if exists && status.st_mode & S_IFMT == S_IFLNK {
            throw .io("\(path) is a symlink; refusing to replace it with a file (write to its target instead)")
        }
        AtomicFile.removeTemporariesOfDeadWriters(of: path)
        do {
            try AtomicFile.write(Array((JSONValue.object(object).jsonText + "\n").utf8), to: path,
                                 mode: exists ? status.st_mode & 0o7777 : 0o600,
                                 owner: exists ? (status.st_uid, status.st_gid) : nil)
        } catch {
            throw .io(error.description)
        }
    }

    /// Creates the file's directory (and parents) if missing; a relative
    /// path's under the working directory.
    /// Each directory is the path up to a slash that ends a component
    /// (not the first byte, not one of a run, not one at the end). Found in
    /// the bytes: `split(separator:)` is generic code whose first call
    /// resolved its types at run time, 0.1 million instructions of every
    /// start-up.
    func createParentDirectories() throws(UserDefaultsError) {
        let bytes = Array(path.utf8)
        let slash = UInt8(ascii: "/")
        var end = bytes.count
        while end > 0 && bytes[end - 1] == slash { end -= 1 }
        for index in bytes.indices.dropFirst() where index < end && bytes[index] == slash && bytes[index - 1] != slash {
            let prefix = String(decoding: bytes[..<index], as: UTF8.self)
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .io("cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }
}
