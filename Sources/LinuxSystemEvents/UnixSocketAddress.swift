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
}
