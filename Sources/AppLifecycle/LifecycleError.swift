/// Why a lifecycle command or app action was rejected. A rejected call
/// changes nothing.
public enum LifecycleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The command is not allowed in the current state (BEHAVIOUR.md §1).
    case commandNotAllowed(command: LifecycleCommand, state: AppState)
    /// A command was issued while another transition is still running
    /// (for example from inside a delegate callback).
    case transitionInProgress(command: LifecycleCommand)
    /// An app action was attempted while the app runs no code.
    case appNotRunning(action: String, state: AppState)
    /// `endBackgroundTask` with a token that is unknown or already ended.
    case unknownBackgroundTask(BackgroundTaskToken)
    /// A service or keep-alive for a background mode the app did not declare.
    case undeclaredBackgroundMode(BackgroundMode)
    /// A keep-alive timeout below the minimum (BEHAVIOUR.md §2).
    case keepAliveTimeoutTooShort(requested: Duration, minimum: Duration)
    /// A scheduled-work identifier registered twice in one run.
    case scheduledTaskAlreadyRegistered(String)
    /// A request for an identifier with no registered launch handler.
    case scheduledTaskNotRegistered(String)
    /// As many requests of this kind wait as the system allows.
    case tooManyPendingScheduledTasks(kind: ScheduledTaskRequest.Kind, limit: Int)
    /// No scheduled task with this identifier is running.
    case scheduledTaskNotRunning(String)

    public var description: String {
        switch self {
        case .commandNotAllowed(let command, let state):
            return "lifecycle command '\(command)' is not allowed in state '\(state)'"
        case .transitionInProgress(let command):
            return "lifecycle command '\(command)' was issued while another transition is running"
        case .appNotRunning(let action, let state):
            return "app action '\(action)' is not allowed in state '\(state)': the app runs no code"
        case .unknownBackgroundTask(let token):
            return "background task \(token) is unknown or already ended"
        case .undeclaredBackgroundMode(let mode):
            return "background mode '\(mode)' was not declared"
        case .keepAliveTimeoutTooShort(let requested, let minimum):
            return "keep-alive timeout \(requested) is below the minimum \(minimum)"
        case .scheduledTaskAlreadyRegistered(let identifier):
            return "scheduled task '\(identifier)' is already registered"
        case .scheduledTaskNotRegistered(let identifier):
            return "scheduled task '\(identifier)' is not registered"
        case .tooManyPendingScheduledTasks(let kind, let limit):
            return "at most \(limit) \(kind.rawValue) request\(limit == 1 ? "" : "s") may wait"
        case .scheduledTaskNotRunning(let identifier):
            return "no scheduled task '\(identifier)' is running"
        }
    }
}
