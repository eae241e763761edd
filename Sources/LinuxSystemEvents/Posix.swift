import Glibc

/// Reading environment variables.
enum ProcessEnvironment {
    static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let value = String(cString: raw)
        return value.isEmpty ? nil : value
    }
}

/// An error reading a file, with the path and the system's reason.
public struct FileReadError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let code: Int32
    public var description: String { "cannot read \(path): \(String(cString: strerror(code)))" }
}

/// Whole-file reads.
enum TextFile {
    static func readBytes(_ path: String) throws(FileReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileReadError(path: path, code: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw FileReadError(path: path, code: errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }

    static func read(_ path: String) throws(FileReadError) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }
}
