import MainLoop

/// Scheduled background work the system started, handed to the launch
/// handler registered for its identifier (iOS's `BGTask`).
///
/// Call ``setTaskCompleted(success:)`` when the work is done: a background
/// app with nothing else keeping it running is then suspended. Before the
/// task's time limit, or when the machine prepares to sleep, its
/// ``expirationHandler`` runs once: stop the work there and complete the
/// task, or a background app is killed at the limit
/// (``KillReason/scheduledTaskTimeExceeded``). Loop thread only.
public final class ScheduledTask {
    /// The registered identifier.
    public let identifier: String
    /// The kind of the request that started it.
    public let kind: ScheduledTaskRequest.Kind
    /// Runs once, before the time limit or before the machine sleeps, if
    /// the task has not completed by then.
    public var expirationHandler: (() -> Void)?
    /// Whether ``setTaskCompleted(success:)`` was called (or the system ended it at its limit).
    public private(set) var isCompleted = false
    /// Whether the expiration handler's moment has come (it runs at most once).
    var expirationPassed = false
    private weak var application: Application?

    init(identifier: String, kind: ScheduledTaskRequest.Kind, application: Application) {
        self.identifier = identifier
        self.kind = kind
        self.application = application
    }

    /// Tells the system the work is done. A second call does nothing.
    /// - Parameter success: whether the work succeeded (kept for the
    ///   caller's logs: the system schedules nothing again by itself;
    ///   submit a new request for more work).
    public func setTaskCompleted(success: Bool) {
        guard let application else { return }
        application.loop.preconditionInLoop()
        guard !isCompleted else { return }
        isCompleted = true
        application.scheduledTaskEnded(self)
    }

    /// Marks the task ended by the system (its run ended, or its limit passed).
    func endedBySystem() { isCompleted = true }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension ScheduledTask: Sendable {}
