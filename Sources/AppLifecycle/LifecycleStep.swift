/// One step of a transition, planned by ``LifecycleStateMachine`` and carried
/// out, in order, by ``Application``.
public enum LifecycleStep: Equatable, Sendable {
    /// The app is now in this state (a `state` line).
    case enterState(AppState)
    /// Call this delegate method (a `callback` line), then the lifecycle observers.
    case callback(LifecycleCallback)
    /// Background time starts counting (entering background).
    case startBackgroundTime
    /// Background time stops counting (leaving background, suspending).
    case stopBackgroundTime
    /// Deliver the system notifications held while suspended (BEHAVIOUR.md §4).
    case deliverHeldNotifications
    /// Run the keep-alive handler (voip keep-alive wake).
    case runKeepAliveHandler
    /// Start the running scheduled task's time limit and call its launch handler.
    case runScheduledTask
    /// Run app timers that came due while suspended, then deferred work (BEHAVIOUR.md §5).
    case runMissedAppWork
    /// Suspend if no background task is open and no service runs (BEHAVIOUR.md §3).
    case suspendIfIdle
    /// The app dies: tasks, timers, services, keep-alive, held notifications
    /// and queued app work are discarded.
    case endApp
}
