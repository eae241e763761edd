import Glibc

/// Building `sockaddr_un` for a path.
enum UnixSocketAddress {
    /// The longest path `sockaddr_un` holds (including the terminator).
    static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    /// Calls `body` with a `sockaddr` for `path`, or returns nil if the path is too long.
    static func with<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result? {
        let bytes = Array(path.utf8)
        guard bytes.count < maxPathBytes else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Like ``with(_:_:)``, but a name starting with `@` is a Linux abstract
    /// address (the `@` becomes a NUL byte and the length counts the name
    /// exactly), as `$NOTIFY_SOCKET` may name one.
    static func withPathOrAbstract<Result>(_ name: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result? {
        guard name.hasPrefix("@") else { return with(name, body) }
        var bytes = Array(name.utf8)
        bytes[0] = 0
        guard bytes.count <= maxPathBytes else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
