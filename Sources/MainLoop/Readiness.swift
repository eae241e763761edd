/// What an fd source waits for, and what it reports as ready.
public struct Readiness: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The fd is readable (or at end of file / hung up).
    public static let read = Readiness(rawValue: 1 << 0)
    /// The fd is writable.
    public static let write = Readiness(rawValue: 1 << 1)
    /// The peer of a socket shut down its sending side, or closed (epoll's
    /// `EPOLLRDHUP`): known when the loop looks, without a read, even with
    /// the peer's data still unread. Reported only to a source that asks
    /// for it, and level-triggered like the rest: it stays reported on
    /// every pass until the source stops asking for it (asked for with
    /// `.read`, it comes when `.read` would anyway, since end of file is
    /// readable). A pipe never reports it: its writer's close is end of
    /// file, `.read`.
    public static let peerClosed = Readiness(rawValue: 1 << 6)
    /// Both.
    public static let readWrite: Readiness = [.read, .write]
    /// Every bit a source can be reported. (Each is libevent's bit for it
    /// shifted down by one, so the loop converts with a shift and a mask.)
    static let all: Readiness = [.read, .write, .peerClosed]
}
