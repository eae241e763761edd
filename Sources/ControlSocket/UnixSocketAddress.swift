import Glibc

/// Building `sockaddr_un` for a path.
public enum UnixSocketAddress {
    /// The longest path `sockaddr_un` holds (including the terminator).
    public static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    /// Calls `body` with a `sockaddr` for `path`, or returns nil if the path is too long.
    public static func with<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result? {
        let bytes = Array(path.utf8)
        guard bytes.count < maxPathBytes else { return nil }
        return withAddress(bytes + [0], length: socklen_t(MemoryLayout<sockaddr_un>.size), body)
    }

    /// Like ``with(_:_:)``, but a name starting with `@` is a Linux abstract
    /// address (the `@` becomes a NUL byte and the length counts the name
    /// exactly), as `$NOTIFY_SOCKET` may name one.
    public static func withPathOrAbstract<Result>(_ name: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result? {
        guard name.hasPrefix("@") else { return with(name, body) }
        var bytes = Array(name.utf8)
        bytes[0] = 0
        guard bytes.count <= maxPathBytes else { return nil }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        return withAddress(bytes, length: length, body)
    }

    /// Calls `body` with an `AF_UNIX` address whose `sun_path` starts with
    /// `pathBytes` (which fit) and the given address length.
    private static func withAddress<Result>(_ pathBytes: [UInt8], length: socklen_t,
                                            _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
