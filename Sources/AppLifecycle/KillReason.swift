/// Why the system killed the app (BEHAVIOUR.md §2). A killed app gets no willTerminate.
public enum KillReason: String, Sendable, CaseIterable, CustomStringConvertible {
    /// didEnterBackground did not return within its limit.
    case didEnterBackgroundTimeout
    /// A background task was still open when background time ran out.
    case backgroundTimeExceeded

    public var description: String { rawValue }
}
