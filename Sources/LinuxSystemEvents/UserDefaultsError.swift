import FileSupport

/// Why a user-defaults operation failed; a failed write changes nothing.
public enum UserDefaultsError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The file is not valid JSON (or not an object). It is never
    /// overwritten silently: fix or delete it by hand.
    case corrupt(path: String, reason: String)
    /// The domain name cannot be a file name.
    case invalidDomain(String)
    /// The file system refused a read, write or lock.
    case io(String)
    /// The file was not read: it is not a regular file (a FIFO, a device,
    /// a directory) or is over ``UserDefaultsStore/maxFileBytes``. Like a
    /// corrupt file, it is never replaced by a write.
    case notRead(FileContents.RefusalReason)

    public var description: String {
        switch self {
        case .corrupt(let path, let reason):
            return "user defaults file \(path) is corrupt (\(reason)); it was left untouched: fix or remove it"
        case .invalidDomain(let domain): return "invalid defaults domain '\(domain)': use letters, digits, '.', '-', '_'"
        case .io(let message): return message
        case .notRead(let reason): return "user defaults file: \(reason)"
        }
    }
}
