import Foundation
import Glibc

/// A service manager's end of the notify protocol: a real `AF_UNIX`
/// datagram socket bound to a path, or to an abstract name given as
/// `@name` (as `$NOTIFY_SOCKET` writes it), collecting each datagram's fields.
final class NotifyListener {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // An abstract name: a leading NUL, and the length counts the name exactly.
        let abstract = path.hasPrefix("@")
        let bytes = abstract ? [0] + Array(path.utf8.dropFirst()) : Array(path.utf8) + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = abstract ? socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
                              : socklen_t(MemoryLayout<sockaddr_un>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw TestFailure("bind \(path): \(errno)") }
    }

    deinit {
        close(fd)
        if !path.hasPrefix("@") { unlink(path) }
    }

    /// The next datagram's lines, or nil after `timeout` seconds.
    func next(timeout: Double) -> [String]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Datagrams until one contains `field` (returned last), within `timeout`.
    func until(_ field: String, timeout: Double) -> [[String]] {
        var seen: [[String]] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, let message = next(timeout: deadline.timeIntervalSinceNow) {
            seen.append(message)
            if message.contains(field) { return seen }
        }
        return seen
    }

    /// Every datagram that arrives within `seconds`.
    func collect(for seconds: Double) -> [[String]] {
        var seen: [[String]] = []
        let deadline = Date().addingTimeInterval(seconds)
        while case let left = deadline.timeIntervalSinceNow, left > 0, let message = next(timeout: left) {
            seen.append(message)
        }
        return seen
    }
}
