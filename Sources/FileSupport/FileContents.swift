import Glibc

/// Whole-file reads, the counterpart of ``AtomicFile`` (scenario files, the
/// locale file, user defaults, zone files).
public enum FileContents {
    /// A failure to read `path`, with the system's reason.
    public struct ReadError: Error, CustomStringConvertible, Equatable, Sendable {
        /// The file.
        public let path: String
        /// The errno of the failing call (`ENOENT` when it does not exist).
        public let code: Int32
        public var description: String { "cannot read \(path): \(String(cString: strerror(code)))" }
    }

    /// Why a file another process controls was not read (see
    /// ``regularFileBytes(_:maxBytes:)``).
    public enum RefusalReason: Error, CustomStringConvertible, Equatable, Sendable {
        /// Nothing is at the path (`ENOENT`, or a dangling symlink).
        case missing(path: String)
        /// It is not a regular file (a FIFO, a device, a directory, a
        /// socket); `kind` names what it is.
        case notRegularFile(path: String, kind: String)
        /// It is larger than the bound.
        case tooLarge(path: String, bytes: Int, limit: Int)
        /// The system refused to open or read it (a symlink loop, no
        /// permission, an I/O error).
        case unreadable(ReadError)

        public var description: String {
            switch self {
            case .missing(let path): "\(path) does not exist"
            case .notRegularFile(let path, let kind): "\(path) is \(kind), not a regular file; not read"
            case .tooLarge(let path, let bytes, let limit):
                "\(path) is \(bytes) bytes, over the limit of \(limit); not read"
            case .unreadable(let error): error.description
            }
        }

        /// Whether this means the file is simply absent.
        public var isMissing: Bool { if case .missing = self { true } else { false } }
    }

    /// The file's bytes, at most `maxBytes` of them: a longer file (or an
    /// endless one, such as `/dev/zero`) is an `EFBIG` error, not a
    /// process that grows until it is killed. Reads FIFOs and devices too
    /// (a scenario may come from a pipe), blocking until they end.
    public static func bytes(_ path: String, maxBytes: Int = 1 << 30) throws(ReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(path: path, code: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(path: path, code: errno)
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= maxBytes else { throw ReadError(path: path, code: EFBIG) }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }

    /// The file's contents as UTF-8 text (at most `maxBytes`, as ``bytes(_:maxBytes:)``).
    public static func text(_ path: String, maxBytes: Int = 1 << 30) throws(ReadError) -> String {
        String(decoding: try bytes(path, maxBytes: maxBytes), as: UTF8.self)
    }

    /// The bytes of a file that another process may have replaced with
    /// anything: read only when it is a regular file of at most `maxBytes`,
    /// so the caller (a loop thread) never blocks on a FIFO, never reads a
    /// device such as `/dev/zero` forever, and never holds more than
    /// `maxBytes`. Symlinks are followed (zone files are links); a loop of
    /// them is ``RefusalReason/unreadable(_:)``.
    ///
    /// The open is non-blocking (a FIFO with no writer would otherwise
    /// block in `open` itself), the type and size come from `fstat` of the
    /// opened descriptor (no race with a rename in between), and the read
    /// stops at `maxBytes + 1` in case the file grew after the `fstat`.
    public static func regularFileBytes(_ path: String, maxBytes: Int) throws(RefusalReason) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw .missing(path: path) }
            throw .unreadable(ReadError(path: path, code: code))
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .unreadable(ReadError(path: path, code: errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw .notRegularFile(path: path, kind: kindName(status.st_mode))
        }
        guard status.st_size <= maxBytes else { throw .tooLarge(path: path, bytes: Int(status.st_size), limit: maxBytes) }
        var bytes = [UInt8](repeating: 0, count: max(1, Int(status.st_size) + 1))
        var total = 0
        while true {
            if total == bytes.count {
                guard bytes.count <= maxBytes else { break }
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, maxBytes + 1 - bytes.count)))
            }
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(ReadError(path: path, code: errno))
            }
            if count == 0 { break }
            total += count
        }
        guard total <= maxBytes else { throw .tooLarge(path: path, bytes: total, limit: maxBytes) }
        bytes.removeLast(bytes.count - total)
        return bytes
    }

    /// What a file mode's type is, in words.
    public static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symlink"
        default: "not a regular file"
        }
    }
}
