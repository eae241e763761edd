/// Why the system killed the app (BEHAVIOUR.md §2). A killed app gets no willTerminate.
public enum KillReason: String, Sendable, CaseIterable, CustomStringConvertible {
    /// didEnterBackground did not return within its limit.
    case didEnterBackgroundTimeout
    /// A background task was still open when background time ran out.
    case backgroundTimeExceeded
    /// A scheduled task was still running in the background at its time limit.
    case scheduledTaskTimeExceeded

    public var description: String { rawValue }
}
