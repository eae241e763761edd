/// Accounting for one kind: nothing is lost silently (BEHAVIOUR.md §4). Every held
/// event ends up folded into a delivered notification, cancelled (net
/// zero), discarded (the app died), or is still pending:
/// `held == folded + cancelled + discarded + pending`.
public struct NotificationCounters: Equatable, Sendable {
    /// Events posted for the kind.
    public var received = 0
    /// Events that did not change the current value (neither delivered nor held).
    public var ignoredUnchanged = 0
    /// Changes that arrived while the app was not running (values updated only).
    public var changedWhileNotRunning = 0
    /// Notifications delivered live (one event each).
    public var deliveredLive = 0
    /// Events held while suspended.
    public var held = 0
    /// Merged notifications delivered on resume.
    public var deliveredMerged = 0
    /// Held events folded into merged notifications.
    public var folded = 0
    /// Held events whose net change was zero.
    public var cancelled = 0
    /// Held events discarded because the app was killed or terminated.
    public var discarded = 0
    /// Events refused because they were over a limit (``CoalescingLimits``);
    /// they changed nothing and are not part of `received`.
    public var refused = 0

    /// Held events not yet resolved.
    public var pending: Int { held - folded - cancelled - discarded }

    public init() {}
}
