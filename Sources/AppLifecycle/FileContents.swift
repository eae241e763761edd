import Glibc

/// Whole-file reads, the counterpart of ``AtomicFile`` (scenario files, the
/// locale file, user defaults, zone files).
public enum FileContents {
    /// A failure to read `path`, with the system's reason.
    public struct ReadError: Error, CustomStringConvertible, Equatable {
        /// The file.
        public let path: String
        /// The errno of the failing call (`ENOENT` when it does not exist).
        public let code: Int32
        public var description: String { "cannot read \(path): \(String(cString: strerror(code)))" }
    }

    /// The file's bytes.
    public static func bytes(_ path: String) throws(ReadError) -> [UInt8] {
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
            bytes.append(contentsOf: buffer[0..<count])
        }
    }

    /// The file's contents as UTF-8 text.
    public static func text(_ path: String) throws(ReadError) -> String {
        String(decoding: try bytes(path), as: UTF8.self)
    }
}
